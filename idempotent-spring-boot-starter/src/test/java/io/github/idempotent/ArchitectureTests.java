package io.github.idempotent;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import io.github.idempotent.store.IdempotencyStore;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * Dependencies point inwards: the protocol and the store SPI know nothing of web, Redis
 * or JDBC, so a store or an integration can be replaced without touching them.
 */
class ArchitectureTests {

	private final JavaClasses classes = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("io.github.idempotent");

	@Test
	void coreAndStoreSpiDependOnNoWebRedisOrJdbc() {
		noClasses().that()
			.resideInAnyPackage("io.github.idempotent.core..", "io.github.idempotent.annotation..")
			.or()
			.resideInAPackage("io.github.idempotent.store")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("org.springframework.web..", "org.springframework.http..", "jakarta.servlet..",
					"org.springframework.data.redis..", "io.lettuce..", "org.springframework.jdbc..", "java.sql..",
					"javax.sql..", "org.springframework.security..")
			.check(this.classes);
	}

	@Test
	void onlyTheLettuceClassesNameLettuceTypes() {
		// Jedis and Redisson applications have no Lettuce: the classes they load must
		// not name its types (RedisClients tells which client runs before any of these
		// is reached; RedisRecordTracking is created only with Lettuce on the class
		// path).
		noClasses().that()
			.haveNameNotMatching("io\\.github\\.idempotent\\.store\\.redis\\."
					+ "(Lettuce\\w*|DedicatedConnections|RedisRecordTracking)(\\$.*)?")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("io.lettuce..", "org.springframework.data.redis.connection.lettuce..")
			.check(this.classes);
	}

	@Test
	void coreDependsOnNoOuterPackage() {
		noClasses().that()
			.resideInAPackage("io.github.idempotent.core..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("io.github.idempotent.web..", "io.github.idempotent.autoconfigure..",
					"io.github.idempotent.store.redis..", "io.github.idempotent.store.jdbc..",
					"io.github.idempotent.store.memory..")
			.check(this.classes);
	}

	@Test
	void packagesAreFreeOfCycles() {
		slices().matching("io.github.idempotent.(**)").should().beFreeOfCycles().check(this.classes);
	}

	@Test
	void theStoreSpiDependsOnNothingOfTheLibrary() {
		noClasses().that()
			.resideInAPackage("io.github.idempotent.store")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("io.github.idempotent.core..", "io.github.idempotent.web..",
					"io.github.idempotent.autoconfigure..")
			.check(this.classes);
	}

	@Test
	void storesDoNotDependOnEachOther() {
		slices().matching("io.github.idempotent.store.(*)..").should().notDependOnEachOther().check(this.classes);
	}

	@Test
	void storesDoNotDependOnTheOuterLayers() {
		noClasses().that()
			.resideInAnyPackage("io.github.idempotent.store..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("io.github.idempotent.web..", "io.github.idempotent.autoconfigure..")
			.check(this.classes);
	}

	@Test
	void clientAndStateStandAlone() {
		// Usable without the server side: a client of someone else's API, or a state
		// machine in an application that has no @Idempotent method.
		noClasses().that()
			.resideInAnyPackage("io.github.idempotent.client..", "io.github.idempotent.state..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("io.github.idempotent.core..", "io.github.idempotent.store..",
					"io.github.idempotent.web..", "io.github.idempotent.autoconfigure..")
			.check(this.classes);
	}

	/**
	 * Reactor is optional: an application without it uses {@code @Idempotent} and
	 * {@code IdempotencyTemplate} all the same, so in core only the {@code Mono} paths
	 * may refer to it (the template's fluent spec names {@code Mono} in the signatures of
	 * its {@code executeMono} methods, which nothing calls without Reactor, the
	 * interceptor's {@code Mono} calls, the scope their calling thread gave, and the
	 * reactive scope resolver, which only reactive calls ask). The SPI that every
	 * application loads, {@code IdempotencyScopeResolver} included, names no Reactor
	 * type.
	 */
	@Test
	void coreRefersToReactorOnlyInItsMonoPaths() {
		noClasses().that()
			.resideInAPackage("io.github.idempotent.core..")
			.and()
			.haveNameNotMatching(
					"io\\.github\\.idempotent\\.core\\.(IdempotencyExecutor\\$ReactiveCalls|CallingThreadScope)(\\$.*)?")
			.and()
			.doNotHaveFullyQualifiedName("io.github.idempotent.core.IdempotencyTemplate$MonoCalls")
			.and()
			.doNotHaveFullyQualifiedName("io.github.idempotent.core.IdempotencyTemplate$OperationSpec")
			.and()
			.doNotHaveFullyQualifiedName("io.github.idempotent.core.ReactiveIdempotencyScopeResolver")
			.and()
			.doNotHaveFullyQualifiedName("io.github.idempotent.core.MonoInvocations")
			.should()
			.dependOnClassesThat()
			.resideInAPackage("reactor..")
			.check(this.classes);
	}

	/**
	 * The protocol decides what a claim means once, for every kind of call: it never
	 * names a future, a reactive type or a coroutine, which belong to the adapters that
	 * carry its decisions out.
	 */
	@Test
	void theProtocolKnowsNoReturnType() {
		noClasses().that()
			.haveFullyQualifiedName("io.github.idempotent.core.IdempotencyProtocol")
			.or()
			.haveNameMatching("io\\.github\\.idempotent\\.core\\.ClaimDecision.*")
			.or()
			.haveFullyQualifiedName("io.github.idempotent.core.ProtocolCall")
			.should()
			.dependOnClassesThat()
			.haveFullyQualifiedName("java.util.concurrent.CompletionStage")
			.orShould()
			.dependOnClassesThat()
			.haveFullyQualifiedName("java.util.concurrent.CompletableFuture")
			.orShould()
			.dependOnClassesThat()
			.resideInAnyPackage("org.reactivestreams..", "reactor..", "kotlin..", "kotlinx..")
			.check(this.classes);
	}

	/**
	 * The protocol and its store access live beside the interception of
	 * {@code @Idempotent} but know nothing of it: no proxy, no expression.
	 */
	@Test
	void theProtocolKnowsNoInterception() {
		noClasses().that()
			.haveNameMatching(
					"io\\.github\\.idempotent\\.core\\.(IdempotencyProtocol|ClaimDecision\\w*|ProtocolCall|StoreAccess)(\\$.*)?")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("org.springframework.expression..", "org.springframework.aop..", "org.aopalliance..")
			.orShould()
			.dependOnClassesThat()
			.haveNameMatching(
					"io\\.github\\.idempotent\\.core\\.(IdempotentInterceptor|MonoInvocations|InvocationArguments"
							+ "|HandlerCall|IdempotentOperation\\w*|OperationValidation|PayloadArguments)(\\$.*)?")
			.check(this.classes);
	}

	/**
	 * An adapter per return type carries out the protocol's decisions: it never reaches a
	 * store itself, so that how a claim, a completion or a release is sent (blocking, or
	 * asynchronously on the right threads) is written once.
	 */
	@Test
	void adaptersNeverReachAStore() {
		noClasses().that()
			.haveNameMatching(
					"io\\.github\\.idempotent\\.core\\.(BlockingCall|CompletionStageCall|IdempotencyExecutor\\$ReactiveCalls|IdempotencyTemplate"
							+ "|IdempotentInterceptor|MonoInvocations|InvocationArguments|HandlerCall|IdempotentOperation"
							+ "|IdempotentOperationSource|OperationValidation|PayloadArguments"
							+ "|IdempotentAnnotation(BeanPostProcessor|AutoConfiguration))(\\$.*)?")
			.or()
			.resideInAnyPackage("io.github.idempotent.web..", "io.github.idempotent.messaging..")
			.should()
			.dependOnClassesThat()
			.areAssignableTo(IdempotencyStore.class)
			.check(this.classes);
	}

	@Test
	void noJavaNativeSerialization() {
		noClasses().should()
			.dependOnClassesThat()
			.haveFullyQualifiedName("java.io.ObjectInputStream")
			.orShould()
			.dependOnClassesThat()
			.haveFullyQualifiedName("java.io.ObjectOutputStream")
			.check(this.classes);
	}

	/**
	 * Who is calling travels with the call: no guard learns its caller, key or recorder
	 * from the request bound to a thread (an executor's decorator may copy it to threads
	 * that work for no one), and no web filter binds a request's context to whatever
	 * thread delivers its signals (another request's work would run under it).
	 */
	@Test
	void noGuardReadsItsCallerFromARequestBoundToAThread() {
		noClasses().should()
			.dependOnClassesThat()
			.haveFullyQualifiedName("org.springframework.web.context.request.RequestContextHolder")
			.because("a guard's inputs come from the request in hand, never from a thread")
			.check(this.classes);
	}

	@Test
	void noWebFilterHoldsAThreadLocal() {
		noClasses().that()
			.implement("org.springframework.web.server.WebFilter")
			.or()
			.implement("jakarta.servlet.Filter")
			.or()
			.implement("reactor.core.CoreSubscriber")
			.should()
			.dependOnClassesThat()
			.haveFullyQualifiedName(ThreadLocal.class.getName())
			.because("a request's context bound to the thread that delivers its signals is read by the work "
					+ "those signals trigger for other requests")
			.check(this.classes);
	}

}
