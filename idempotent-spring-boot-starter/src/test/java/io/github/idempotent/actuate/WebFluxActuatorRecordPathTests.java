package io.github.idempotent.actuate;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.chaos.ChaosApp;
import io.github.idempotent.testsupport.TestRedis;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the chaos campaign's WebFlux run found: the Actuator endpoint's
 * {@code /actuator/idempotency/{operation}/{key}} must address the record of {@code key}
 * on WebFlux as on Spring MVC, so that an operator can read it and delete it.
 */
@SpringBootTest(classes = ChaosApp.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "chaos.web=reactive", "chaos.instance=0",
				"chaos.ledger=${java.io.tmpdir}/idempotent-webflux-actuator-ledger.log", "idempotent.store.type=redis",
				"management.endpoints.web.exposure.include=idempotency",
				"management.endpoint.idempotency.access=unrestricted" })
class WebFluxActuatorRecordPathTests {

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", TestRedis::host);
		registry.add("spring.data.redis.port", TestRedis::port);
	}

	@LocalServerPort
	private int port;

	@Test
	void theRecordOfAKeyIsReadAndDeletedThroughItsPath() throws Exception {
		HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
		String key = "actuator-path-" + UUID.randomUUID();
		HttpResponse<String> work = http.send(HttpRequest.newBuilder(uri("/work"))
			.header("Idempotency-Key", key)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{}"))
			.timeout(Duration.ofSeconds(30))
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(work.statusCode()).isEqualTo(200);
		HttpResponse<String> read = http.send(HttpRequest.newBuilder(uri("/actuator/idempotency/chaos/" + key))
			.timeout(Duration.ofSeconds(30))
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(read.statusCode()).as(read.body()).isEqualTo(200);
		assertThat(read.body()).contains("\"state\":\"COMPLETED\"");
		HttpResponse<String> deleted = http.send(HttpRequest.newBuilder(uri("/actuator/idempotency/chaos/" + key))
			.DELETE()
			.timeout(Duration.ofSeconds(30))
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(deleted.body()).contains("\"storedKey\":\"idempotent:_:chaos:" + key + "\"")
			.contains("\"deleted\":true");
	}

	private URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

}
