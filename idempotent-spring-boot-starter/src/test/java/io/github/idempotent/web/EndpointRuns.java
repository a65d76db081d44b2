package io.github.idempotent.web;

/**
 * Counts the runs of a test application's endpoints by name: what a controller that
 * serves both test applications, {@link WebTestApplication} and
 * {@link WebFluxTestApplication}, counts its runs with.
 */
interface EndpointRuns {

	/**
	 * Counts a run of {@code endpoint}, and returns how many it has had.
	 */
	int increment(String endpoint);

}
