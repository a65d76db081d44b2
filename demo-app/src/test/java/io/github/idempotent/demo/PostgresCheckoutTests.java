package io.github.idempotent.demo;

import org.springframework.test.context.ActiveProfiles;

/**
 * The checkout suite on PostgreSQL (profile {@code postgres}), when one answers; on CI it
 * must.
 */
@ActiveProfiles("postgres")
@RequiresDatabase(name = "PostgreSQL", port = 5432)
class PostgresCheckoutTests extends AbstractCheckoutTests {

}
