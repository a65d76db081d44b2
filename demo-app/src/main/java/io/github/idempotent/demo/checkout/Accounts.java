package io.github.idempotent.demo.checkout;

import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

@Repository
class Accounts {

	private final JdbcClient jdbc;

	Accounts(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	Optional<Account> find(long id) {
		return this.jdbc.sql("SELECT id, holder, balance FROM accounts WHERE id = :id")
			.param("id", id)
			.query(Account.class)
			.optional();
	}

	Account open(String holder, long balance) {
		// Random ids keep the one migration portable (no IDENTITY vs AUTO_INCREMENT);
		// 1..999 stay free for accounts seeded by migrations.
		long id = ThreadLocalRandom.current().nextLong(1_000, 1_000_000_000);
		this.jdbc.sql("INSERT INTO accounts (id, holder, balance) VALUES (:id, :holder, :balance)")
			.param("id", id)
			.param("holder", holder)
			.param("balance", balance)
			.update();
		return new Account(id, holder, balance);
	}

	/**
	 * Takes {@code amount} off the balance if it covers it, in one statement so that two
	 * debits can never both pass the check.
	 * @return whether the balance was debited
	 */
	boolean debit(long id, long amount) {
		return this.jdbc.sql("UPDATE accounts SET balance = balance - :amount WHERE id = :id AND balance >= :amount")
			.param("id", id)
			.param("amount", amount)
			.update() == 1;
	}

	void credit(long id, long amount) {
		int updated = this.jdbc.sql("UPDATE accounts SET balance = balance + :amount WHERE id = :id")
			.param("id", id)
			.param("amount", amount)
			.update();
		if (updated != 1) {
			throw CheckoutException.notFound("Account " + id);
		}
	}

	long balance(long id) {
		return this.jdbc.sql("SELECT balance FROM accounts WHERE id = :id").param("id", id).query(Long.class).single();
	}

}
