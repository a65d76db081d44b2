package io.github.idempotent.web

import java.time.Duration
import java.util.UUID
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicInteger
import java.util.concurrent.atomic.AtomicReference

import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.delay
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.BeforeEach
import org.junit.jupiter.api.Test

import org.springframework.beans.factory.annotation.Autowired
import org.springframework.boot.SpringBootConfiguration
import org.springframework.boot.autoconfigure.EnableAutoConfiguration
import org.springframework.boot.test.context.SpringBootTest
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment
import org.springframework.boot.test.web.server.LocalServerPort
import org.springframework.context.annotation.Bean
import org.springframework.http.HttpStatus
import org.springframework.http.MediaType
import org.springframework.http.ResponseEntity
import org.springframework.security.config.web.server.ServerHttpSecurity
import org.springframework.security.web.server.SecurityWebFilterChain
import org.springframework.test.context.DynamicPropertyRegistry
import org.springframework.test.context.DynamicPropertySource
import org.springframework.test.web.reactive.server.EntityExchangeResult
import org.springframework.test.web.reactive.server.WebTestClient
import org.springframework.web.bind.annotation.PostMapping
import org.springframework.web.bind.annotation.RequestBody
import org.springframework.web.bind.annotation.ResponseStatus
import org.springframework.web.bind.annotation.RestController

import io.github.idempotent.annotation.Idempotent
import io.github.idempotent.testsupport.ExactReplays
import io.github.idempotent.testsupport.TestRedis

/**
 * Kotlin `suspend` functions on a WebFlux controller, on the Redis store, over real HTTP:
 * Spring routes them through Reactor, and they get the same contract as a `Mono`.
 */
@SpringBootTest(
	classes = [SuspendIdempotencyTests.SuspendApplication::class],
	webEnvironment = WebEnvironment.RANDOM_PORT,
	properties = ["spring.main.web-application-type=reactive", "idempotent.store.type=redis",
		"idempotent.retry-after=2s"],
)
class SuspendIdempotencyTests {

	companion object {

		@JvmStatic
		@DynamicPropertySource
		fun redis(registry: DynamicPropertyRegistry) {
			registry.add("spring.data.redis.host", TestRedis::host)
			registry.add("spring.data.redis.port", TestRedis::port)
		}

	}

	@LocalServerPort
	private var port: Int = 0

	@Autowired
	private lateinit var callsOfThisTest: AtomicReference<Calls>

	private val calls: Calls
		get() = callsOfThisTest.get()

	private lateinit var client: WebTestClient

	@BeforeEach
	fun setUp() {
		client = WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:$port")
			.responseTimeout(Duration.ofSeconds(30))
			.build()
		callsOfThisTest.set(Calls())
	}

	@Test
	fun firstCallRunsAndAReplayReturnsTheSameResponseWithoutRunning() {
		val key = UUID.randomUUID().toString()
		val body = """{"orderNo":"K-1","amount":250}"""
		val first = post("/suspend-payments", key, body)
		assertThat(first.status.value()).isEqualTo(201)
		assertThat(first.responseHeaders.getFirst("Idempotent-Replayed")).isNull()
		assertThat(first.responseBody).contains("\"id\":\"kpay-1-K-1\"")

		val replay = post("/suspend-payments", key, body)
		assertThat(replay.status.value()).isEqualTo(201)
		assertThat(replay.responseBody).isEqualTo(first.responseBody)
		assertThat(replay.responseHeaders.getFirst("X-Payment-Id"))
			.isEqualTo(first.responseHeaders.getFirst("X-Payment-Id"))
		assertThat(replay.responseHeaders.getFirst("Idempotent-Replayed")).isEqualTo("true")
		assertThat(replay.responseHeaders.getFirst("Idempotency-Key")).isEqualTo(key)
		assertThat(calls.payments.get()).isEqualTo(1)
	}

	@Test
	fun duplicateWhileTheFunctionIsSuspendedIsConflictWithRetryAfter() {
		val key = UUID.randomUUID().toString()
		val body = """{"orderNo":"K-2","amount":5}"""
		val first = CompletableFuture.supplyAsync { post("/suspend-slow-payments", key, body) }
		// The first call holds the key once its function has started, and stays suspended
		// until the gate opens.
		calls.entered.get(30, TimeUnit.SECONDS)

		val duplicate = post("/suspend-slow-payments", key, body)
		assertThat(duplicate.status.value()).isEqualTo(409)
		assertThat(duplicate.responseHeaders.getFirst("Retry-After")).isEqualTo("2")
		assertThat(duplicate.responseHeaders.contentType).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON)
		assertThat(duplicate.responseBody).contains("\"status\":409").contains(key)

		calls.gate.complete(Unit)
		val completed = first.get(30, TimeUnit.SECONDS)
		assertThat(completed.status.value()).isEqualTo(200)
		assertThat(completed.responseBody).contains("\"id\":\"kslow-1\"")
		val replay = post("/suspend-slow-payments", key, body)
		assertThat(replay.responseBody).isEqualTo(completed.responseBody)
		assertThat(replay.responseHeaders.getFirst("Idempotent-Replayed")).isEqualTo("true")
		assertThat(calls.slowPayments.get()).isEqualTo(1)
	}

	@Test
	fun aReplayIsByteForByteWhatTheFirstCallerGot() {
		val key = UUID.randomUUID().toString()
		val body = """{"orderNo":"K-3","amount":1}"""
		val first = postForBytes("/suspend-amounts", key, body)
		val replay = postForBytes("/suspend-amounts", key, body)
		assertThat(replay.status.value()).isEqualTo(201)
		assertThat(replay.responseBody).isEqualTo(first.responseBody)
		assertThat(replay.responseHeaders.getFirst("Idempotent-Replayed")).isEqualTo("true")
		ExactReplays.assertExactAmounts(replay.responseBody!!)
		assertThat(calls.amounts.get()).isEqualTo(1)
	}

	private fun postForBytes(path: String, key: String, body: String): EntityExchangeResult<ByteArray> =
		client.post()
			.uri(path)
			.contentType(MediaType.APPLICATION_JSON)
			.header("Idempotency-Key", key)
			.bodyValue(body)
			.exchange()
			.expectBody(ByteArray::class.java)
			.returnResult()

	private fun post(path: String, key: String, body: String): EntityExchangeResult<String> =
		client.post()
			.uri(path)
			.contentType(MediaType.APPLICATION_JSON)
			.header("Idempotency-Key", key)
			.bodyValue(body)
			.exchange()
			.expectBody(String::class.java)
			.returnResult()

	data class PaymentRequest(val orderNo: String, val amount: Long)

	data class Payment(val id: String, val orderNo: String, val amount: Long)

	/**
	 * What the controller did, kept apart from it: the controller is a proxy, whose
	 * fields are not the target's.
	 */
	class Calls {

		val payments = AtomicInteger()

		val slowPayments = AtomicInteger()

		val amounts = AtomicInteger()

		val entered = CompletableFuture<Unit>()

		val gate = CompletableDeferred<Unit>()

	}

	/**
	 * Class and functions are `open` by hand (no all-open compiler plugin) so that the
	 * `@Idempotent` proxy can subclass the controller.
	 */
	@RestController
	open class SuspendPaymentsController(private val calls: () -> Calls) {

		@PostMapping("/suspend-payments")
		@Idempotent
		open suspend fun pay(@RequestBody request: PaymentRequest): ResponseEntity<Payment> {
			// Resumes on another thread: the result arrives after a real suspension.
			delay(10)
			val n = calls().payments.incrementAndGet()
			val payment = Payment("kpay-$n-${request.orderNo}", request.orderNo, request.amount)
			return ResponseEntity.status(HttpStatus.CREATED).header("X-Payment-Id", payment.id).body(payment)
		}

		@PostMapping("/suspend-amounts")
		@ResponseStatus(HttpStatus.CREATED)
		@Idempotent
		open suspend fun amounts(@RequestBody request: PaymentRequest): Map<String, Any> {
			delay(10)
			return ExactReplays.amounts(calls().amounts.incrementAndGet())
		}

		@PostMapping("/suspend-slow-payments")
		@Idempotent
		open suspend fun slowPay(@RequestBody request: PaymentRequest): Payment {
			val calls = calls()
			val n = calls.slowPayments.incrementAndGet()
			calls.entered.complete(Unit)
			// Suspended, not blocking a thread, until the test opens the gate.
			calls.gate.await()
			return Payment("kslow-$n", request.orderNo, request.amount)
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	open class SuspendApplication {

		@Bean
		open fun calls() = AtomicReference(Calls())

		@Bean
		open fun suspendPaymentsController(calls: AtomicReference<Calls>) = SuspendPaymentsController(calls::get)

		@Bean
		open fun securityWebFilterChain(http: ServerHttpSecurity): SecurityWebFilterChain =
			http.csrf { it.disable() }.authorizeExchange { it.anyExchange().permitAll() }.build()

	}

}
