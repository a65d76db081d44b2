package io.github.idempotent.web;

import java.util.ArrayList;
import java.util.List;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;
import io.github.idempotent.web.WebTestApplication.Executions;

/**
 * An order endpoint whose response body is about 2 KB of JSON (an order with 24 line
 * items), the size at which stored results are compressed.
 */
@RestController
class LargeOrdersController {

	private final Executions executions;

	LargeOrdersController(Executions executions) {
		this.executions = executions;
	}

	@PostMapping("/large-orders")
	@Idempotent
	ResponseEntity<LargeOrder> order(@RequestBody LargeOrderRequest request) {
		int n = this.executions.increment("large-orders");
		List<Line> lines = new ArrayList<>();
		for (int i = 1; i <= request.items(); i++) {
			lines.add(new Line("SKU-" + (1000 + i), "Item number " + i + " of order " + request.orderNo(), i % 3 + 1,
					1999 + i, "USD"));
		}
		LargeOrder order = new LargeOrder("ord-" + n + "-" + request.orderNo(), "PAID", request.customer(), lines,
				lines.stream().mapToLong((line) -> line.quantity() * line.unitPrice()).sum());
		return ResponseEntity.status(HttpStatus.CREATED).header("Location", "/large-orders/" + order.id()).body(order);
	}

	record LargeOrderRequest(String orderNo, String customer, int items) {
	}

	record LargeOrder(String id, String status, String customer, List<Line> items, long total) {
	}

	record Line(String sku, String name, int quantity, long unitPrice, String currency) {
	}

}
