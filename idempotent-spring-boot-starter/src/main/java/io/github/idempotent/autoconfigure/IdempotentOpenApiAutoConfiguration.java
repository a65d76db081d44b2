package io.github.idempotent.autoconfigure;

import org.springdoc.core.customizers.OperationCustomizer;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

import io.github.idempotent.web.IdempotentWebProperties;
import io.github.idempotent.web.openapi.IdempotencyOperationCustomizer;

/** Documents the idempotency contract in springdoc's OpenAPI description. */
@AutoConfiguration
@ConditionalOnClass(OperationCustomizer.class)
@ConditionalOnWebApplication
@ConditionalOnBooleanProperty(name = "idempotent.enabled", matchIfMissing = true)
@EnableConfigurationProperties({ IdempotentProperties.class, IdempotentWebProperties.class })
public final class IdempotentOpenApiAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	IdempotencyOperationCustomizer idempotencyOperationCustomizer(IdempotentProperties properties,
			IdempotentWebProperties web) {
		return new IdempotencyOperationCustomizer(web.headerName(), web.replayedHeader(), properties.maxKeyLength());
	}

}
