package smoketest.webmvc.jedis;

import java.net.http.HttpRequest;
import java.util.UUID;

import org.junit.jupiter.api.Test;
import smoketest.storm.HttpStorm;
import smoketest.webmvc.jedis.SmokeApplication.PaymentController;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
class WebMvcJedisSmokeTests {

	@LocalServerPort
	int port;

	@Autowired
	PaymentController payments;

	@Test
	void aStormOfDuplicatesRunsThePaymentOnce() throws Exception {
		HttpRequest request = HttpStorm.post(this.port, "/payments", UUID.randomUUID().toString(), "{\"amount\":10}",
				null);
		HttpStorm.run(32, this.payments::release, request);
		assertThat(this.payments.executions()).isOne();
	}

	@Test
	void theClassPathHasNoReactor() {
		assertThatExceptionOfType(ClassNotFoundException.class)
			.isThrownBy(() -> Class.forName("reactor.core.publisher.Mono"));
	}

}
