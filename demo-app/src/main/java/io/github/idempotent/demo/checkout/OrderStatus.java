package io.github.idempotent.demo.checkout;

import io.github.idempotent.state.StateMachine;

/**
 * Life of an order. Each move is a compare-and-set on {@code orders.status}.
 */
public enum OrderStatus {

	CREATED, PAID, SHIPPED, COMPLETED, REFUNDED, CANCELLED;

	static final StateMachine<OrderStatus> MACHINE = StateMachine.builder(OrderStatus.class)
		.allow(CREATED, PAID, CANCELLED)
		.allow(PAID, SHIPPED, REFUNDED)
		.allow(SHIPPED, COMPLETED)
		.build();

}
