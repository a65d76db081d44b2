/**
 * Spring Boot Actuator endpoint {@code idempotency}: find, read and delete idempotency
 * records.
 */
package io.github.idempotent.actuate;
