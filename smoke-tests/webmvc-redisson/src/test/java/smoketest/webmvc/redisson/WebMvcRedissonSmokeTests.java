package smoketest.webmvc.redisson;

import java.net.http.HttpRequest;
import java.util.UUID;

import org.junit.jupiter.api.Test;
import smoketest.storm.HttpStorm;
import smoketest.webmvc.redisson.SmokeApplication.PaymentController;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
class WebMvcRedissonSmokeTests {

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

}
