/** OpenAPI documentation of the idempotency contract, for springdoc. */
package io.github.idempotent.web.openapi;
