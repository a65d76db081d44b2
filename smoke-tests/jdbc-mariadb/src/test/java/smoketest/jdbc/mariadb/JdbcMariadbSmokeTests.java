package smoketest.jdbc.mariadb;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.Test;
import smoketest.jdbc.mariadb.SmokeApplication.PaymentController;
import smoketest.storm.HttpStorm;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
class JdbcMariadbSmokeTests {

	@LocalServerPort
	int port;

	@Autowired
	PaymentController payments;

	@Test
	void aStormOfDuplicatesRunsEachUsersPaymentOnce() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpRequest alice = HttpStorm.post(this.port, "/payments", key, "{\"amount\":10}",
				HttpStorm.basic("alice", "alice-password"));
		HttpRequest bob = HttpStorm.post(this.port, "/payments", key, "{\"amount\":10}",
				HttpStorm.basic("bob", "bob-password"));
		List<HttpResponse<String>> firsts = HttpStorm.run(16, this.payments::release, alice, bob);
		assertThat(firsts.get(0).body()).contains("\"payer\":\"alice\"");
		assertThat(firsts.get(1).body()).contains("\"payer\":\"bob\"");
		assertThat(this.payments.executions("alice")).isOne();
		assertThat(this.payments.executions("bob")).isOne();
	}

	@Test
	void theClassPathHasNeitherRedisNorReactor() {
		assertThatExceptionOfType(ClassNotFoundException.class)
			.isThrownBy(() -> Class.forName("org.springframework.data.redis.connection.RedisConnectionFactory"));
		assertThatExceptionOfType(ClassNotFoundException.class)
			.isThrownBy(() -> Class.forName("reactor.core.publisher.Mono"));
	}

}
