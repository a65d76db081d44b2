package io.github.idempotent.web;

import java.net.http.HttpResponse;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.github.idempotent.testsupport.AbstractFinalOutcomeTests;
import io.github.idempotent.testsupport.FinalOutcomesController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code idempotent.web.release-on-status} set to {@code 4xx}: a handler without an
 * attribute of its own releases its 400, so a corrected retry runs, and keeps its 503,
 * which is replayed; a handler's {@code releaseOnStatus} still wins over the property.
 */
@SpringBootTest(classes = { WebTestApplication.class, FinalOutcomesController.class },
		webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=redis", "idempotent.local-cache.enabled=false",
				"idempotent.web.release-on-status=4xx", "outcomes.checked-released=none" })
class ReleaseOnStatusPropertyHttpTests {

	private static final String PREFIX = "outcomes-property-" + UUID.randomUUID();

	@LocalServerPort
	private int port;

	@Autowired
	private FinalOutcomesController ledger;

	@Autowired
	private RedisConnectionFactory connectionFactory;

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		AbstractFinalOutcomeTests.useRedis(registry, PREFIX);
	}

	@Test
	void theStatusesThePropertyNamesAreReleasedAndNoOthers() throws Exception {
		HttpClientSupport http = new HttpClientSupport(this.port);
		String checked = UUID.randomUUID().toString();
		assertThat(http.post("/outcomes/checked", checked, "{\"amount\":-5}").statusCode()).isEqualTo(400);
		assertThat(AbstractFinalOutcomeTests.redisRecords(this.connectionFactory, PREFIX, checked)).isZero();
		assertThat(http.post("/outcomes/checked", checked, "{\"amount\":5}").statusCode()).isEqualTo(201);
		assertThat(this.ledger.runs("checked", checked)).isEqualTo(2);

		String unavailable = UUID.randomUUID().toString();
		assertThat(http.post("/outcomes/unavailable-once", unavailable, "{}").statusCode()).isEqualTo(503);
		HttpResponse<String> retry = http.post("/outcomes/unavailable-once", unavailable, "{}");
		assertThat(retry.statusCode()).isEqualTo(503);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.ledger.runs("unavailable-once", unavailable)).isEqualTo(1);
	}

	@Test
	void aHandlersOwnReleaseOnStatusWinsOverTheProperty() throws Exception {
		HttpClientSupport http = new HttpClientSupport(this.port);
		String key = UUID.randomUUID().toString();
		assertThat(http.post("/outcomes/checked-released", key, "{\"amount\":-5}").statusCode()).isEqualTo(400);
		assertThat(http.post("/outcomes/checked-released", key, "{\"amount\":5}").statusCode()).isEqualTo(422);
		assertThat(this.ledger.runs("checked-released", key)).isEqualTo(1);
	}

}
