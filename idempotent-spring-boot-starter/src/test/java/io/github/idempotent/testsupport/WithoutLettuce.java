package io.github.idempotent.testsupport;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.Tag;

/**
 * A test of another Redis client than Lettuce, run only in a JVM without lettuce-core on
 * its class path (surefire's {@code without-lettuce} execution), as an application that
 * excluded it runs: a class of the starter that names a Lettuce type fails there.
 */
@Target({ ElementType.TYPE, ElementType.METHOD })
@Retention(RetentionPolicy.RUNTIME)
@Tag(WithoutLettuce.TAG)
public @interface WithoutLettuce {

	String TAG = "without-lettuce";

}
