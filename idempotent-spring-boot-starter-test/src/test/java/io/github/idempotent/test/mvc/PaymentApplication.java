package io.github.idempotent.test.mvc;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A servlet application with one guarded controller, as a user of the starter writes it.
 */
@SpringBootApplication
class PaymentApplication {

}
