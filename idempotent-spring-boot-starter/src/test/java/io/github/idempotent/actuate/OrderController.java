package io.github.idempotent.actuate;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import io.github.idempotent.annotation.Idempotent;

/**
 * Orders, named {@code orders}, binary receipts, and a method under its default name
 * whose first call hangs until the test lets it go.
 */
@RestController
public class OrderController {

	private final AtomicInteger orders = new AtomicInteger();

	private final AtomicInteger stuckCalls = new AtomicInteger();

	private volatile CountDownLatch entered = new CountDownLatch(1);

	private volatile CountDownLatch released = new CountDownLatch(1);

	@PostMapping("/orders")
	@Idempotent(name = "orders")
	public ActuatorTestApplication.Order order(@RequestBody ActuatorTestApplication.OrderRequest request) {
		return new ActuatorTestApplication.Order(this.orders.incrementAndGet(), request.item());
	}

	/**
	 * A receipt as a PDF-like binary body.
	 */
	@PostMapping("/receipts")
	@Idempotent(name = "receipts")
	public ResponseEntity<byte[]> receipt(@RequestBody ActuatorTestApplication.OrderRequest request) {
		byte[] pdf = { '%', 'P', 'D', 'F', '-', '1', '.', '7', '\n', (byte) 0xE2, (byte) 0xE3, (byte) 0xCF,
				(byte) 0xD3 };
		return ResponseEntity.ok().contentType(MediaType.APPLICATION_PDF).body(pdf);
	}

	/**
	 * The first call hangs until {@link #release()}; later calls return at once.
	 */
	@PostMapping("/stuck")
	@Idempotent
	public ActuatorTestApplication.Order stuck(@RequestBody ActuatorTestApplication.OrderRequest request)
			throws InterruptedException {
		int call = this.stuckCalls.incrementAndGet();
		if (call == 1) {
			this.entered.countDown();
			this.released.await(30, TimeUnit.SECONDS);
		}
		return new ActuatorTestApplication.Order(call, request.item());
	}

	/**
	 * {@link #stuck} with a lease of 1.5 s, renewed every half second: its owner renews
	 * soon after an operator deletes its record.
	 */
	@PostMapping("/hung")
	@Idempotent(name = "hung", lease = "1500ms")
	public ActuatorTestApplication.Order hung(@RequestBody ActuatorTestApplication.OrderRequest request)
			throws InterruptedException {
		return stuck(request);
	}

	public boolean awaitStuck() throws InterruptedException {
		return this.entered.await(10, TimeUnit.SECONDS);
	}

	public void release() {
		this.released.countDown();
	}

	public void reset() {
		this.released.countDown();
		this.orders.set(0);
		this.stuckCalls.set(0);
		this.entered = new CountDownLatch(1);
		this.released = new CountDownLatch(1);
	}

	public int stuckCalls() {
		return this.stuckCalls.get();
	}

	public int orders() {
		return this.orders.get();
	}

}
