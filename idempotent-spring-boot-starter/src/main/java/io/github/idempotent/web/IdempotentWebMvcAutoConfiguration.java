package io.github.idempotent.web;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter;

import io.github.idempotent.core.IdempotencyExecutor;
import io.github.idempotent.core.IdempotencyScopeResolver;

/** The HTTP contract of {@code @Idempotent} on Spring MVC. */
@AutoConfiguration(beforeName = "io.github.idempotent.autoconfigure.IdempotentAutoConfiguration",
		afterName = "org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration")
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
@ConditionalOnBooleanProperty(name = "idempotent.enabled", matchIfMissing = true)
@Import(WebContractConfiguration.class)
public final class IdempotentWebMvcAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	ResponseRecordingFilter idempotentResponseRecordingFilter(WebContract contract) {
		return new ResponseRecordingFilter(contract);
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotentHandlerAdapter idempotentHandlerAdapter(ObjectProvider<RequestMappingHandlerAdapter> delegate,
			IdempotencyExecutor calls, IdempotencyScopeResolver scopeResolver, WebContract contract) {
		return new IdempotentHandlerAdapter(delegate, calls, scopeResolver, contract);
	}

}
