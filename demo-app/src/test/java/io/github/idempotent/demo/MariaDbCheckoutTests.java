package io.github.idempotent.demo;

import org.springframework.test.context.ActiveProfiles;

/**
 * The checkout suite on MariaDB (profile {@code mariadb}), when one answers; on CI it
 * must.
 */
@ActiveProfiles("mariadb")
@RequiresDatabase(name = "MariaDB", port = 3306)
class MariaDbCheckoutTests extends AbstractCheckoutTests {

}
