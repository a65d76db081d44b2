package io.github.idempotent.test.webflux;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A reactive application with one guarded controller, as a user of the starter writes it.
 */
@SpringBootApplication
class OrderApplication {

}
