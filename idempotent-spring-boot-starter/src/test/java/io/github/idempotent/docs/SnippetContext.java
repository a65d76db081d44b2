package io.github.idempotent.docs;

import java.time.Clock;

import org.springframework.amqp.rabbit.config.SimpleRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.listener.SimpleMessageListenerContainer;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.github.idempotent.core.IdempotencyTemplate;
import io.github.idempotent.docs.ReaderTypes.ChargeProvider;
import io.github.idempotent.docs.ReaderTypes.Duplicates;
import io.github.idempotent.docs.ReaderTypes.Gateway;
import io.github.idempotent.docs.ReaderTypes.Ledger;
import io.github.idempotent.docs.ReaderTypes.Orders;
import io.github.idempotent.docs.ReaderTypes.PaymentRequest;
import io.github.idempotent.docs.ReaderTypes.Payments;
import io.github.idempotent.docs.ReaderTypes.Receipts;

/**
 * The fields of the reader's application that the Java snippets of the docs use without
 * declaring them ({@code idempotency}, {@code payments}, {@code request}, ...). Every
 * snippet is compiled as the body of a class that extends this one (see
 * {@link DocumentedJavaSnippetsTests}); a snippet that declares a field of the same name
 * uses its own.
 */
@SuppressWarnings("NullAway")
public abstract class SnippetContext {

	protected IdempotencyTemplate idempotency;

	protected Payments payments;

	protected ChargeProvider provider;

	protected Receipts receipts;

	protected Gateway gateway;

	protected Ledger ledger;

	protected Duplicates duplicates;

	protected Orders orders;

	protected Clock clock;

	protected JdbcClient jdbcClient;

	protected SimpleMessageListenerContainer container;

	protected SimpleRabbitListenerContainerFactory factory;

	protected PaymentRequest request;

	protected String idempotencyKey;

	protected String key;

	protected String batchId;

}
