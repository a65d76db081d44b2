package io.github.idempotent.web;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.annotation.RegisterReflectionForBinding;
import org.springframework.core.ResolvableType;
import org.springframework.http.ResponseEntity;

import io.github.idempotent.core.ResultConverter;

/**
 * Stores a {@link ResponseEntity} as its status, its replayed headers (never credentials)
 * and its typed body. Only the web auto-configuration creates it, so that the stored form
 * is bound for native images there alone.
 */
@RegisterReflectionForBinding(ResponseEntityResultConverter.StoredResponse.class)
class ResponseEntityResultConverter implements ResultConverter {

	private final ReplayedHeaders replayed;

	ResponseEntityResultConverter(WebContract contract) {
		this.replayed = contract.replayedHeaders;
	}

	@Override
	public @Nullable ResolvableType storedType(ResolvableType returnType) {
		if (!ResponseEntity.class.isAssignableFrom(returnType.toClass())) {
			return null;
		}
		ResolvableType body = returnType.as(ResponseEntity.class).getGeneric(0);
		if (body.resolve() == null) {
			body = ResolvableType.forClass(Object.class);
		}
		return ResolvableType.forClassWithGenerics(StoredResponse.class, body);
	}

	@Override
	public Object toStored(Object value) {
		ResponseEntity<?> entity = (ResponseEntity<?>) value;
		Map<String, List<String>> headers = new LinkedHashMap<>();
		for (Map.Entry<String, List<String>> header : entity.getHeaders().headerSet()) {
			if (this.replayed.isReplayed(header.getKey())) {
				headers.put(header.getKey(), new ArrayList<>(header.getValue()));
			}
		}
		return new StoredResponse<>(entity.getStatusCode().value(), headers, entity.getBody());
	}

	@Override
	public Object fromStored(Object stored) {
		StoredResponse<?> response = (StoredResponse<?>) stored;
		return ResponseEntity.status(response.status())
			.headers((headers) -> response.headers().forEach(headers::put))
			.body(response.body());
	}

	record StoredResponse<T>(int status, Map<String, List<String>> headers, @Nullable T body) {
	}

}
