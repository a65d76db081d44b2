package io.github.idempotent.web

import java.security.Principal

import kotlinx.coroutines.delay

import org.springframework.web.bind.annotation.PostMapping
import org.springframework.web.bind.annotation.RequestBody
import org.springframework.web.bind.annotation.RequestHeader
import org.springframework.web.bind.annotation.RestController

import io.github.idempotent.annotation.Idempotent

/**
 * The Kotlin `suspend` handler of [CallerIdentityPropertyTests], on either stack.
 */
@RestController
class SuspendPayments {

	@PostMapping("/p/suspend")
	@Idempotent
	suspend fun pay(principal: Principal, @RequestHeader("X-Stack") stack: String,
			@RequestHeader("Idempotency-Key") key: String, @RequestBody body: Map<String, Any?>): Map<String, Any?> {
		delay(1)
		return CallerIdentityPropertyTests.ran(stack, "suspend", principal.name, key, body)
	}

}
