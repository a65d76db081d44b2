/**
 * Spring Boot Actuator endpoint {@code idempotency}: find, read and delete idempotency
 * records; the health indicator of the Redis store's memory. The endpoint's
 * auto-configuration and {@code management.endpoint.idempotency.*} live here.
 */
package io.github.idempotent.actuate;
