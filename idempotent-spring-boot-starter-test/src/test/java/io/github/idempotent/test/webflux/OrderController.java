package io.github.idempotent.test.webflux;

import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;

@RestController
class OrderController {

	// Read through methods: the test holds the starter's proxy, whose fields are unset.
	private final AtomicInteger placed = new AtomicInteger();

	private final AtomicInteger slowOrdersStarted = new AtomicInteger();

	private final Sinks.Empty<Void> slowOrderMayFinish = Sinks.empty();

	int placed() {
		return this.placed.get();
	}

	int slowOrdersStarted() {
		return this.slowOrdersStarted.get();
	}

	void finishSlowOrder() {
		this.slowOrderMayFinish.tryEmitEmpty();
	}

	@PostMapping("/api/orders")
	@Idempotent
	Mono<ResponseEntity<Order>> place(@RequestBody OrderRequest request) {
		return Mono.fromSupplier(() -> {
			this.placed.incrementAndGet();
			Order order = new Order(UUID.randomUUID().toString(), request.item());
			return ResponseEntity.status(201).header("Location", "/api/orders/" + order.id()).body(order);
		});
	}

	@PostMapping("/api/slow-orders")
	@Idempotent
	Mono<ResponseEntity<Order>> placeSlowly(@RequestBody OrderRequest request) {
		return Mono.fromRunnable(this.slowOrdersStarted::incrementAndGet)
			.then(this.slowOrderMayFinish.asMono())
			.then(place(request));
	}

	record OrderRequest(String item) {
	}

	record Order(String id, String item) {
	}

}
