package io.github.idempotent.demo.shipping;

import java.util.List;
import java.util.Map;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

@RestController
class ShippingController {

	private final ShippingService shipping;

	ShippingController(ShippingService shipping) {
		this.shipping = shipping;
	}

	@GetMapping("/api/accounts/{id}/shipments")
	List<Shipment> shipments(@PathVariable long id) {
		return this.shipping.ofAccount(id);
	}

	@GetMapping("/api/shipping/deliveries")
	Map<String, Long> deliveries() {
		return Map.of("deliveries", this.shipping.deliveries());
	}

}
