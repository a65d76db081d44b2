package io.github.idempotent.demo.checkout;

/**
 * An account; money in minor units (cents).
 */
public record Account(long id, String holder, long balance) {
}
