package io.github.idempotent.test;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

import io.github.idempotent.autoconfigure.IdempotentAutoConfiguration;
import io.github.idempotent.web.IdempotentWebProperties;

/**
 * Auto-configuration of {@link IdempotencyTester} and the observer that counts for it, in
 * any test context that has this module: full ({@code @SpringBootTest}) and sliced
 * ({@code @WebMvcTest}, {@code @WebFluxTest}).
 */
@AutoConfiguration(before = IdempotentAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "idempotent.enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdempotentWebProperties.class)
public final class IdempotencyTestAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RecordingIdempotencyObserver recordingIdempotencyObserver() {
		return new RecordingIdempotencyObserver();
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotencyTester idempotencyTester(RecordingIdempotencyObserver calls, IdempotentWebProperties web) {
		return new IdempotencyTester(calls, web.headerName(), web.replayedHeader());
	}

}
