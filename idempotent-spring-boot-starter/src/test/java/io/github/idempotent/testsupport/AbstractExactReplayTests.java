package io.github.idempotent.testsupport;

import java.net.http.HttpResponse;
import java.util.UUID;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.test.web.server.LocalServerPort;

import static io.github.idempotent.testsupport.ExactReplays.assertExactAmounts;
import static io.github.idempotent.testsupport.ExactReplays.assertReplayOf;
import static io.github.idempotent.testsupport.ExactReplays.post;
import static io.github.idempotent.testsupport.ExactReplays.send;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A replay is the bytes the first caller got: untyped amounts keep their digits and
 * scale, text keeps its charset, binary its bytes. The application serves
 * {@code /exact/untyped-entity} (a {@code ResponseEntity} of a map, 201, header
 * {@code X-Run}), {@code /exact/object} (a plain {@code Object}, 201),
 * {@code /exact/text} (ISO-8859-1 text), {@code /exact/binary} (octet stream), and the
 * amounts as a {@code CompletableFuture} ({@code /exact/future}) and a {@code Mono}
 * ({@code /exact/mono}), built from {@link ExactReplays}, and {@code /exact/header},
 * whose handler sets header {@code X-Receipt} on the response itself; one subclass per
 * web stack and store.
 */
public abstract class AbstractExactReplayTests {

	@LocalServerPort
	private int port;

	protected int port() {
		return this.port;
	}

	/**
	 * How many times the method behind {@code counter} ran ({@code exact-untyped},
	 * {@code exact-object}, ...).
	 */
	protected abstract int runs(String counter);

	@ParameterizedTest
	@ValueSource(strings = { "untyped-entity", "object", "text", "binary" })
	protected void aReplayIsByteForByteTheFirstResponse(String endpoint) throws Exception {
		assertReplaysExactly(endpoint);
	}

	@ParameterizedTest
	@ValueSource(strings = { "future", "mono" })
	protected void anAsynchronousResultReplaysByteForByte(String endpoint) throws Exception {
		assertReplaysExactly(endpoint);
	}

	/**
	 * Calls {@code /exact/<endpoint>} twice with one key and checks the second is the
	 * first replayed, the method run once.
	 */
	protected void assertReplaysExactly(String endpoint) throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<byte[]> first = send(post(this.port, "/exact/" + endpoint, key).build());
		HttpResponse<byte[]> replay = send(post(this.port, "/exact/" + endpoint, key).build());
		assertReplayOf(replay, first, key);
		assertThat(runs("exact-" + endpoint.replace("-entity", ""))).isEqualTo(1);
	}

	@Test
	protected void aHeaderTheHandlerSetOnTheResponseWhileItRanIsReplayed() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<byte[]> first = send(post(this.port, "/exact/header", key).build());
		HttpResponse<byte[]> replay = send(post(this.port, "/exact/header", key).build());
		assertThat(first.headers().firstValue("X-Receipt")).hasValue("receipt-1");
		assertThat(replay.headers().firstValue("X-Receipt")).hasValue("receipt-1");
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(runs("exact-header")).isEqualTo(1);
	}

	@Test
	protected void untypedAmountsReplayWithTheirDigitsAndScale() throws Exception {
		String key = UUID.randomUUID().toString();
		send(post(this.port, "/exact/untyped-entity", key).build());
		assertExactAmounts(send(post(this.port, "/exact/untyped-entity", key).build()).body());
	}

	/**
	 * A retry gets the representation the first call was sent, whatever it accepts now,
	 * as Stripe's API answers: the first call has happened, and the stored response is
	 * its outcome.
	 */
	@Test
	protected void aRetryThatAcceptsAnotherTypeGetsTheStoredRepresentation() throws Exception {
		String key = UUID.randomUUID().toString();
		HttpResponse<byte[]> first = send(post(this.port, "/exact/untyped-entity", key).build());
		HttpResponse<byte[]> retry = send(
				post(this.port, "/exact/untyped-entity", key).header("Accept", "application/xml").build());
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Content-Type")).hasValue("application/json");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(runs("exact-untyped")).isEqualTo(1);
	}

}
