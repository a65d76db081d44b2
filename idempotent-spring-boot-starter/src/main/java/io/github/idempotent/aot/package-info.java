/**
 * Runtime hints for Spring's AOT processing and GraalVM native images: what the starter
 * loads as a resource or through reflection whatever the application's methods are. The
 * hints for each {@code @Idempotent} method come from the annotation itself.
 */
package io.github.idempotent.aot;
