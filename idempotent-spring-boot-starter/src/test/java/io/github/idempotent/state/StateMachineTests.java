package io.github.idempotent.state;

import org.junit.jupiter.api.Test;

import io.github.idempotent.state.StateMachine.Decision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class StateMachineTests {

	enum Status {

		CREATED, PAID, SHIPPED, REFUNDED, CANCELLED

	}

	private final StateMachine<Status> machine = StateMachine.builder(Status.class)
		.allow(Status.CREATED, Status.PAID, Status.CANCELLED)
		.allow(Status.PAID, Status.SHIPPED, Status.REFUNDED)
		.build();

	@Test
	void tableAnswersWhoMayMoveWhere() {
		assertThat(this.machine.allows(Status.CREATED, Status.PAID)).isTrue();
		assertThat(this.machine.allows(Status.PAID, Status.CREATED)).isFalse();
		assertThat(this.machine.targetsOf(Status.PAID)).containsExactly(Status.SHIPPED, Status.REFUNDED);
		assertThat(this.machine.targetsOf(Status.REFUNDED)).isEmpty();
		assertThat(this.machine.sourcesOf(Status.REFUNDED)).containsExactly(Status.PAID);
	}

	@Test
	void alreadyInTargetIsToldApartFromIllegal() {
		assertThat(this.machine.decide("A-1", Status.CREATED, Status.PAID)).isEqualTo(Decision.APPLY);
		assertThat(this.machine.decide("A-1", Status.PAID, Status.PAID)).isEqualTo(Decision.ALREADY_IN_TARGET);
		assertThatExceptionOfType(IllegalStateTransitionException.class)
			.isThrownBy(() -> this.machine.decide("A-1", Status.CREATED, Status.REFUNDED))
			.withMessage(
					"Cannot move A-1 from CREATED to REFUNDED: from CREATED it can only move to " + "[PAID, CANCELLED]")
			.satisfies((ex) -> assertThat(ex.getCurrent()).isEqualTo(Status.CREATED));
		assertThatExceptionOfType(IllegalStateTransitionException.class)
			.isThrownBy(() -> this.machine.decide("A-1", Status.CANCELLED, Status.PAID))
			.withMessageEndingWith("CANCELLED is final");
	}

	@Test
	void selfTransitionIsRefused() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> StateMachine.builder(Status.class).allow(Status.PAID, Status.PAID));
	}

	@Test
	void builtMachineIsImmutable() {
		assertThat(this.machine.targetsOf(Status.CREATED)).isUnmodifiable();
	}

}
