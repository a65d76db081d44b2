/**
 * Testing an application's {@code @Idempotent} endpoints: the starter in
 * {@code @WebMvcTest} and {@code @WebFluxTest} slices on an in-memory store, and
 * {@link io.github.idempotent.test.IdempotencyTester}, which sends duplicates through
 * {@code MockMvc}, {@code WebTestClient} or {@code RestTestClient} and asserts, from the
 * starter's own counts, that the method ran once and that every replay is the first
 * response.
 */
package io.github.idempotent.test;
