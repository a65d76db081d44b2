package io.github.idempotent.web;

import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpStatus;
import org.springframework.web.HttpMediaTypeNotAcceptableException;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.servlet.ModelAndView;

import io.github.idempotent.web.WebTestApplication.Executions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A handler keyed by its arguments returned, then its response could not be written (the
 * client accepts no type it produces) and the application's advice answered with an error
 * view: the key ends as completed, not stored, instead of staying in progress until its
 * maxDuration and then running again.
 */
@SpringBootTest(classes = { WebTestApplication.class, ErrorViewAfterReturnTests.ErrorView.class },
		webEnvironment = WebEnvironment.RANDOM_PORT, properties = "idempotent.store.type=memory")
class ErrorViewAfterReturnTests {

	@LocalServerPort
	private int port;

	@Autowired
	private Executions executions;

	@Test
	void anErrorViewAfterTheHandlerReturnedEndsTheKey() throws Exception {
		this.executions.reset();
		HttpClientSupport http = new HttpClientSupport(this.port);
		String body = "{\"orderNo\":\"EV-" + UUID.randomUUID() + "\",\"amount\":1}";
		HttpRequest acceptsXml = HttpRequest.newBuilder(http.uri("/keyed-payments"))
			.timeout(Duration.ofSeconds(20))
			.header("Content-Type", "application/json")
			.header("Accept", "application/xml")
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build();
		HttpResponse<String> first = http.client().send(acceptsXml, HttpResponse.BodyHandlers.ofString());
		assertThat(first.statusCode()).isEqualTo(406);
		HttpResponse<String> retry = http.post("/keyed-payments", null, body);
		assertThat(retry.body()).doesNotContain("in-progress").contains("result-unavailable");
		assertThat(this.executions.count("keyed")).isEqualTo(1);
	}

	/**
	 * Neither echoed nor marked, however the error answer is written: by a view through
	 * the writer, or through the output stream as a message converter writes.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "view", "stream" })
	void anErrorAnswerAfterTheHandlerReturnedIsNotEchoed(String written) throws Exception {
		HttpClientSupport http = new HttpClientSupport(this.port);
		HttpRequest acceptsXml = HttpRequest.newBuilder(http.uri("/payments"))
			.timeout(Duration.ofSeconds(20))
			.header("Content-Type", "application/json")
			.header("Accept", "application/xml")
			.header("Idempotency-Key", UUID.randomUUID().toString())
			.header("X-Error-Written", written)
			.POST(HttpRequest.BodyPublishers.ofString("{\"orderNo\":\"EV-2\",\"amount\":1}"))
			.build();
		HttpResponse<String> response = http.client().send(acceptsXml, HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).isEqualTo(406);
		AbstractHttpContractTests.assertNotMarked(response);
	}

	@TestConfiguration(proxyBeanMethods = false)
	@ControllerAdvice
	static class ErrorView {

		@ExceptionHandler(HttpMediaTypeNotAcceptableException.class)
		@ResponseStatus(HttpStatus.NOT_ACCEPTABLE)
		ModelAndView notAcceptable(HttpServletRequest request, HttpServletResponse response) throws IOException {
			if ("stream".equals(request.getHeader("X-Error-Written"))) {
				response.getOutputStream().write("not acceptable".getBytes(StandardCharsets.UTF_8));
				return new ModelAndView();
			}
			return new ModelAndView("error");
		}

	}

}
