package io.github.idempotent.demo.checkout;

import java.util.List;
import java.util.Optional;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.dao.DuplicateKeyException;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Isolation;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;

import io.github.idempotent.core.IdempotencyContext;
import io.github.idempotent.state.TransitionResult;

/**
 * The checkout's rules. Every money-moving method starts with the order's compare-and-set
 * transition, in the transaction that moves the money: the transition decides whether
 * this call moves money at all.
 * <p>
 * READ COMMITTED on every database: under MariaDB's default REPEATABLE READ a call that
 * waited for a concurrent one would read the ledger as it was before the wait.
 */
@Service
@Transactional(isolation = Isolation.READ_COMMITTED)
public class CheckoutService {

	private static final Log logger = LogFactory.getLog(CheckoutService.class);

	private final Accounts accounts;

	private final Orders orders;

	private final Ledger ledger;

	CheckoutService(Accounts accounts, Orders orders, Ledger ledger) {
		this.accounts = accounts;
		this.orders = orders;
		this.ledger = ledger;
	}

	@Transactional(readOnly = true)
	public Account account(long id) {
		return this.accounts.find(id).orElseThrow(() -> CheckoutException.notFound("Account " + id));
	}

	public Account openAccount(String holder, long balance) {
		if (balance < 0) {
			throw CheckoutException.invalid("balance must not be negative");
		}
		return this.accounts.open((holder != null && !holder.isBlank()) ? holder : "Demo", balance);
	}

	@Transactional(readOnly = true)
	public Order order(String orderNo) {
		return this.orders.find(orderNo).orElseThrow(() -> CheckoutException.notFound("Order " + orderNo));
	}

	@Transactional(readOnly = true)
	public List<LedgerEntry> ledger(long accountId) {
		account(accountId);
		return this.ledger.ofAccount(accountId);
	}

	@Transactional(readOnly = true)
	public Payment payment(String paymentId) {
		return this.ledger.findById(paymentId)
			.filter((entry) -> Ledger.PAYMENT.equals(entry.kind()))
			.map(CheckoutService::payment)
			.orElseThrow(() -> CheckoutException.notFound("Payment " + paymentId));
	}

	/**
	 * Creates the order, or returns the existing one when {@code orderNo} is taken by an
	 * order with the same account and amount: the UNIQUE constraint on
	 * {@code orders.order_no} turns a retried create into a read.
	 */
	@Transactional(propagation = Propagation.NEVER)
	public Created<Order> createOrder(String orderNo, long accountId, long amount) {
		if (orderNo == null || orderNo.isBlank() || orderNo.length() > 64) {
			throw CheckoutException.invalid("orderNo must be 1 to 64 characters");
		}
		if (amount <= 0) {
			throw CheckoutException.invalid("amount must be positive (minor units)");
		}
		account(accountId);
		boolean created;
		try {
			// Outside a transaction on purpose: on PostgreSQL a failed INSERT poisons the
			// transaction it runs in, and the read below must still work.
			this.orders.insert(orderNo, accountId, amount);
			created = true;
		}
		catch (DuplicateKeyException ex) {
			created = false;
		}
		Order order = order(orderNo);
		if (order.accountId() != accountId || order.amount() != amount) {
			throw new CheckoutException(HttpStatus.CONFLICT, "order-no-taken",
					"Order number " + orderNo + " is already used by another order (account " + order.accountId()
							+ ", amount " + order.amount() + "); choose a new order number");
		}
		return new Created<>(order, created);
	}

	/**
	 * Pays the order: CREATED -> PAID and the debit, together or not at all. An order
	 * already PAID gets its existing payment back and is not debited again, whichever
	 * idempotency key the call came with.
	 * <p>
	 * A call that takes over from an attempt that never finished (its instance died after
	 * the debit committed, before it answered) first looks for the payment that attempt
	 * made, by the idempotency key recorded with it: found, it is this request's payment,
	 * and the answer is the {@code 201} the first attempt's client never got, not the
	 * {@code 200} of an order paid by another request.
	 */
	public Created<Payment> pay(String orderNo) {
		IdempotencyContext call = IdempotencyContext.current().orElse(null);
		if (call != null && call.isTakeover()) {
			Optional<LedgerEntry> earlier = this.ledger.findPayment(orderNo, call.getKey());
			if (earlier.isPresent()) {
				logger.info("Order " + orderNo + " was paid by an earlier attempt of this request that never "
						+ "answered (attempt " + call.getAttempt() + " now): its payment is the answer, nothing "
						+ "is debited again");
				return new Created<>(payment(earlier.get()), true);
			}
		}
		TransitionResult<OrderStatus> transition = this.orders.transition(orderNo, OrderStatus.CREATED,
				OrderStatus.PAID);
		if (transition instanceof TransitionResult.Applied) {
			Order order = order(orderNo);
			if (!this.accounts.debit(order.accountId(), order.amount())) {
				// Thrown out of the transaction, so the order goes back to CREATED.
				throw insufficientFunds(order);
			}
			long balance = this.accounts.balance(order.accountId());
			LedgerEntry entry = this.ledger.record(order.accountId(), orderNo, Ledger.PAYMENT, -order.amount(), balance,
					(call != null) ? call.getKey() : null);
			// With -Ptracing, the line carries the trace and span ids of the idempotent
			// call.
			logger.info("Order " + orderNo + " paid: " + order.amount() + " debited from account " + order.accountId());
			return new Created<>(payment(entry), true);
		}
		if (transition instanceof TransitionResult.AlreadyInTarget) {
			return new Created<>(payment(this.ledger.find(orderNo, Ledger.PAYMENT).orElseThrow()), false);
		}
		throw CheckoutException.notFound("Order " + orderNo);
	}

	/**
	 * Refunds a paid order: PAID -> REFUNDED and the credit, once.
	 */
	public Order refund(String orderNo) {
		TransitionResult<OrderStatus> transition = this.orders.transition(orderNo, OrderStatus.PAID,
				OrderStatus.REFUNDED);
		if (transition instanceof TransitionResult.NotFound) {
			throw CheckoutException.notFound("Order " + orderNo);
		}
		Order order = order(orderNo);
		if (transition instanceof TransitionResult.Applied) {
			this.accounts.credit(order.accountId(), order.amount());
			this.ledger.record(order.accountId(), orderNo, Ledger.REFUND, order.amount(),
					this.accounts.balance(order.accountId()));
		}
		return order;
	}

	public Order ship(String orderNo) {
		return move(orderNo, OrderStatus.PAID, OrderStatus.SHIPPED);
	}

	public Order complete(String orderNo) {
		return move(orderNo, OrderStatus.SHIPPED, OrderStatus.COMPLETED);
	}

	public Order cancel(String orderNo) {
		return move(orderNo, OrderStatus.CREATED, OrderStatus.CANCELLED);
	}

	/**
	 * A transition without money: applied or already done, the answer is the order.
	 */
	private Order move(String orderNo, OrderStatus from, OrderStatus to) {
		if (this.orders.transition(orderNo, from, to) instanceof TransitionResult.NotFound) {
			throw CheckoutException.notFound("Order " + orderNo);
		}
		return order(orderNo);
	}

	private CheckoutException insufficientFunds(Order order) {
		return new CheckoutException(HttpStatus.UNPROCESSABLE_CONTENT, "insufficient-funds",
				"Account " + order.accountId() + " has " + this.accounts.balance(order.accountId()) + ", less than the "
						+ order.amount() + " of order " + order.orderNo()
						+ "; nothing was charged and the order is still CREATED");
	}

	private static Payment payment(LedgerEntry entry) {
		return new Payment(entry.id(), entry.orderNo(), entry.accountId(), -entry.amount(), entry.balanceAfter(),
				entry.createdAt());
	}

	/**
	 * A result and whether this call created it (201) or found it (200).
	 */
	public record Created<T>(T value, boolean created) {
	}

}
