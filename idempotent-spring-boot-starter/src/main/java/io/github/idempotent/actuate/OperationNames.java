package io.github.idempotent.actuate;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;

import io.github.idempotent.store.RecordKey;

/** The full name of the operation an operator means. */
final class OperationNames {

	private final Supplier<Set<String>> known;

	OperationNames(Supplier<Set<String>> known) {
		this.known = known;
	}

	Set<String> known() {
		return this.known.get();
	}

	/**
	 * A known name as it is; else the known name whose record-key form it is; else the
	 * one known default name it abbreviates; else the name as given.
	 */
	String resolve(String operation) {
		Collection<String> known = this.known.get();
		if (known.contains(operation)) {
			return operation;
		}
		List<String> matches = new ArrayList<>();
		for (String name : known) {
			if (RecordKey.nameInKey(name).equals(operation) || abbreviates(operation, name)) {
				matches.add(name);
			}
		}
		if (matches.size() > 1) {
			throw new InvalidEndpointRequestException("Operation '" + operation + "' is ambiguous: " + matches,
					"Operation '" + operation + "' names more than one operation: " + matches + "; give the full name");
		}
		return matches.isEmpty() ? operation : matches.get(0);
	}

	/**
	 * {@code SimpleClass.method} or {@code SimpleClass#method} of
	 * {@code pkg.SimpleClass#method(types)}.
	 */
	private static boolean abbreviates(String operation, String name) {
		int hash = name.indexOf('#');
		int parameters = name.indexOf('(', hash + 1);
		if (hash < 0 || parameters < 0) {
			return false;
		}
		String type = name.substring(0, hash);
		String simple = type.substring(type.lastIndexOf('.') + 1);
		String method = name.substring(hash + 1, parameters);
		return operation.equals(simple + "." + method) || operation.equals(simple + "#" + method);
	}

}
