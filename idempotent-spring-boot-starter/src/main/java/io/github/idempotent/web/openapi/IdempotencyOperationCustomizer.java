package io.github.idempotent.web.openapi;

import java.math.BigDecimal;
import java.util.List;

import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.headers.Header;
import io.swagger.v3.oas.models.media.Content;
import io.swagger.v3.oas.models.media.IntegerSchema;
import io.swagger.v3.oas.models.media.MediaType;
import io.swagger.v3.oas.models.media.ObjectSchema;
import io.swagger.v3.oas.models.media.StringSchema;
import io.swagger.v3.oas.models.parameters.HeaderParameter;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.oas.models.responses.ApiResponses;
import org.springdoc.core.customizers.OperationCustomizer;

import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.Assert;
import org.springframework.web.method.HandlerMethod;

import io.github.idempotent.annotation.Idempotent;

/**
 * Documents the idempotency contract of every {@code @Idempotent} endpoint in springdoc's
 * OpenAPI description: the {@code Idempotency-Key} header, {@code Idempotent-Replayed},
 * and the 400, 409, 422 and 503 problem responses. Responses the application documents
 * are left as they are.
 */
public class IdempotencyOperationCustomizer implements OperationCustomizer {

	private final String keyHeader;

	private final String replayedHeader;

	private final int maxKeyLength;

	public IdempotencyOperationCustomizer(String keyHeader, String replayedHeader, int maxKeyLength) {
		Assert.hasText(keyHeader, "keyHeader must not be empty");
		Assert.hasText(replayedHeader, "replayedHeader must not be empty");
		this.keyHeader = keyHeader;
		this.replayedHeader = replayedHeader;
		this.maxKeyLength = maxKeyLength;
	}

	@Override
	public Operation customize(Operation operation, HandlerMethod handlerMethod) {
		Idempotent idempotent = AnnotatedElementUtils.findMergedAnnotation(handlerMethod.getMethod(), Idempotent.class);
		if (idempotent == null) {
			return operation;
		}
		boolean headerKey = idempotent.key().isEmpty();
		if (headerKey && !hasHeader(operation, this.keyHeader)) {
			operation.addParametersItem(new HeaderParameter().name(this.keyHeader)
				.required(idempotent.required())
				.description("Unique key of this operation, such as a UUID: a retry with the same key and the "
						+ "same body gets the first response again instead of running the operation twice. "
						+ "A bare token or an RFC 8941 string of printable ASCII.")
				.schema(new StringSchema().minLength(1).maxLength(this.maxKeyLength)));
		}
		ApiResponses responses = (operation.getResponses() != null) ? operation.getResponses() : new ApiResponses();
		operation.setResponses(responses);
		responses.forEach((status, response) -> {
			if (status.startsWith("2")) {
				response.addHeaderObject(this.replayedHeader,
						new Header()
							.description("true when this response is a replay of the first response to the same key")
							.schema(new StringSchema()._enum(List.of("true"))));
			}
		});
		if (idempotent.required() || !headerKey) {
			addProblem(responses, "400", "The idempotency key is missing or malformed", false);
		}
		addProblem(responses, "409", "A request with the same idempotency key is still in progress; retry after "
				+ "Retry-After seconds with the same key", true);
		addProblem(responses, "422", "The idempotency key was already used with a different request body", false);
		addProblem(responses, "503", "The idempotency key could not be checked; the operation did not run. "
				+ "Retry after Retry-After seconds with the same key", true);
		return operation;
	}

	private static boolean hasHeader(Operation operation, String name) {
		return operation.getParameters() != null && operation.getParameters()
			.stream()
			.anyMatch((parameter) -> "header".equals(parameter.getIn()) && name.equalsIgnoreCase(parameter.getName()));
	}

	private static void addProblem(ApiResponses responses, String status, String description, boolean retryAfter) {
		if (responses.containsKey(status)) {
			return;
		}
		ApiResponse response = new ApiResponse().description(description)
			.content(new Content().addMediaType("application/problem+json",
					new MediaType().schema(new ObjectSchema().addProperty("type", new StringSchema())
						.addProperty("title", new StringSchema())
						.addProperty("status", new IntegerSchema())
						.addProperty("detail", new StringSchema())
						.addProperty("instance", new StringSchema()))));
		if (retryAfter) {
			response.addHeaderObject("Retry-After",
					new Header().description("Seconds to wait before retrying with the same key")
						.schema(new IntegerSchema().minimum(BigDecimal.ONE)));
		}
		responses.addApiResponse(status, response);
	}

}
