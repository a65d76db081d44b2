package io.github.idempotent.demo;

/**
 * The checkout suite on the embedded H2 database (PostgreSQL mode): always runs.
 */
class H2CheckoutTests extends AbstractCheckoutTests {

}
