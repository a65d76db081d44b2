/**
 * Spring Boot Actuator endpoint {@code idempotency}: find, read and delete idempotency
 * records; the health indicator of the Redis store's memory.
 */
package io.github.idempotent.actuate;
