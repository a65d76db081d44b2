/** Runtime hints for AOT processing and native images. */
package io.github.idempotent.aot;
