package io.github.idempotent.autoconfigure;

import java.util.Map;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

import io.github.idempotent.autoconfigure.IdempotentProperties.StoreType;

/**
 * {@code idempotent.store.type} is {@code auto} (or missing) or the type of
 * {@link ConditionalOnStoreType}.
 */
class StoreTypeCondition extends SpringBootCondition {

	@Override
	public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
		Map<String, Object> attributes = metadata.getAnnotationAttributes(ConditionalOnStoreType.class.getName());
		StoreType required = (StoreType) attributes.get("value");
		StoreType configured = configured(context);
		if (configured == StoreType.AUTO || configured == required) {
			return ConditionOutcome.match("idempotent.store.type is " + configured);
		}
		return ConditionOutcome.noMatch("idempotent.store.type is " + configured + ", not " + required);
	}

	static StoreType configured(ConditionContext context) {
		return Binder.get(context.getEnvironment())
			.bind("idempotent.store.type", StoreType.class)
			.orElse(StoreType.AUTO);
	}

}
