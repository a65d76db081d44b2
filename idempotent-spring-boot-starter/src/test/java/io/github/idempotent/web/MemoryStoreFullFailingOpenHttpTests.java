package io.github.idempotent.web;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;

/**
 * The in-memory store full of an attacker's records, failing open: the victim's key is
 * refused, not run unprotected.
 */
@SpringBootTest(classes = WebTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotent.store.type=memory", "idempotent.failure-mode=open",
				"idempotent.store.memory.maximum-records=3", "idempotent.retry-after=3s" })
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_EACH_TEST_METHOD)
class MemoryStoreFullFailingOpenHttpTests extends AbstractStoreFullHttpTests {

	@Override
	int attackerOrderLength() {
		return 10;
	}

}
