package io.github.idempotent;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The public surface of the starter is what docs/api.md says it is. Every public type is
 * listed there once, as API (what applications use), SPI (what they implement or replace)
 * or Internal (public only because another package of the starter calls it); and the
 * public and protected members of every API and SPI type match the committed signatures
 * in {@code api/public-api.txt}. A change to either fails here until the page and the
 * signatures say so: after reviewing the change, run this class with
 * {@code -Didempotent.api.update=true} to write the new signatures, and update
 * docs/api.md (and the CHANGELOG) by hand.
 */
class PublicApiTests {

	private static final Path PAGE = Path.of("../docs/api.md");

	private static final Path SIGNATURES = Path.of("api/public-api.txt");

	private static final Pattern ROW = Pattern
		.compile("^\\|\\s*`(io\\.github\\.idempotent\\.[\\w.$]+)`\\s*\\|\\s*(API|SPI|Internal)\\s*\\|");

	@Test
	void everyPublicTypeIsListedOnceOnTheApiPage() throws IOException {
		Map<String, String> listed = listedTypes();
		TreeSet<String> publicTypes = publicTopLevelTypes();
		TreeSet<String> unlisted = new TreeSet<>(publicTypes);
		unlisted.removeAll(listed.keySet());
		TreeSet<String> gone = new TreeSet<>(listed.keySet());
		gone.removeAll(publicTypes);
		assertThat(unlisted)
			.as("public types that docs/api.md does not list: add a row (API, SPI or Internal) "
					+ "for each, or make the type package-private")
			.isEmpty();
		assertThat(gone)
			.as("types that docs/api.md lists but that are no longer public: remove their rows "
					+ "and say in the CHANGELOG what moved or went")
			.isEmpty();
	}

	@Test
	void theMembersOfApiAndSpiTypesMatchTheCommittedSignatures() throws Exception {
		StringBuilder dump = new StringBuilder();
		for (Map.Entry<String, String> type : listedTypes().entrySet()) {
			if (!type.getValue().equals("Internal")) {
				describe(Class.forName(type.getKey()), type.getValue(), dump);
			}
		}
		String current = dump.toString();
		if (Boolean.getBoolean("idempotent.api.update")) {
			Files.createDirectories(SIGNATURES.getParent());
			Files.writeString(SIGNATURES, current, StandardCharsets.UTF_8);
		}
		String committed = Files.exists(SIGNATURES) ? Files.readString(SIGNATURES, StandardCharsets.UTF_8) : "";
		assertThat(current)
			.as("the public API changed: review the difference, update docs/api.md and the CHANGELOG, then run "
					+ "./mvnw -ntp -pl idempotent-spring-boot-starter test -Dtest=PublicApiTests "
					+ "-Didempotent.api.update=true to accept it")
			.isEqualTo(committed);
	}

	private static Map<String, String> listedTypes() throws IOException {
		Map<String, String> listed = new TreeMap<>();
		List<String> duplicates = new ArrayList<>();
		for (String line : Files.readAllLines(PAGE, StandardCharsets.UTF_8)) {
			Matcher row = ROW.matcher(line);
			if (row.find() && listed.put(row.group(1), row.group(2)) != null) {
				duplicates.add(row.group(1));
			}
		}
		assertThat(duplicates).as("types listed twice in docs/api.md").isEmpty();
		return listed;
	}

	private static TreeSet<String> publicTopLevelTypes() {
		TreeSet<String> types = new TreeSet<>();
		for (JavaClass type : new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
			.importPackages("io.github.idempotent")) {
			if (type.isTopLevelClass() && type.getModifiers().contains(JavaModifier.PUBLIC)
					&& !type.getSimpleName().equals("package-info")) {
				types.add(type.getName());
			}
		}
		return types;
	}

	private static void describe(Class<?> type, String kind, StringBuilder dump) {
		dump.append(type.getName()).append(" (").append(kind).append(")\n");
		Stream.of(members(type)).sorted().forEach((member) -> dump.append("  ").append(member).append('\n'));
		Arrays.stream(type.getDeclaredClasses())
			.filter((nested) -> isVisible(nested.getModifiers(), type))
			.sorted((a, b) -> a.getName().compareTo(b.getName()))
			.forEach((nested) -> describe(nested, kind, dump));
	}

	private static String[] members(Class<?> type) {
		List<String> members = new ArrayList<>();
		for (Constructor<?> constructor : type.getDeclaredConstructors()) {
			add(members, constructor, constructor.toGenericString(), type);
		}
		for (Method method : type.getDeclaredMethods()) {
			if (!method.isSynthetic() && !method.isBridge()) {
				add(members, method, method.toGenericString(), type);
			}
		}
		for (Field field : type.getDeclaredFields()) {
			if (!field.isSynthetic()) {
				add(members, field, field.toGenericString(), type);
			}
		}
		return members.toArray(String[]::new);
	}

	private static void add(List<String> members, Member member, String signature, Class<?> type) {
		if (isVisible(member.getModifiers(), type)) {
			members.add(signature);
		}
	}

	private static boolean isVisible(int modifiers, Class<?> declaringType) {
		return Modifier.isPublic(modifiers)
				|| (Modifier.isProtected(modifiers) && !Modifier.isFinal(declaringType.getModifiers()));
	}

}
