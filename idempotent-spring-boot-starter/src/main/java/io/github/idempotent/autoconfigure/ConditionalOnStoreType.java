package io.github.idempotent.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.context.annotation.Conditional;

import io.github.idempotent.autoconfigure.IdempotentProperties.StoreType;

/** Matches when {@code idempotent.store.type} is {@code auto} or the given type. */
@Target({ ElementType.TYPE, ElementType.METHOD })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Conditional(StoreTypeCondition.class)
@interface ConditionalOnStoreType {

	StoreType value();

}
