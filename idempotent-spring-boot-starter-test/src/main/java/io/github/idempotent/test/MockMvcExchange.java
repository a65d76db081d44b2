package io.github.idempotent.test;

import jakarta.servlet.ServletContext;

import org.springframework.beans.Mergeable;
import org.springframework.http.HttpHeaders;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.RequestBuilder;
import org.springframework.test.web.servlet.SmartRequestBuilder;
import org.springframework.test.web.servlet.request.MockMvcRequestBuilders;

/**
 * One request through {@link MockMvc}, an asynchronous handler's result dispatched as a
 * servlet container would.
 */
final class MockMvcExchange implements Exchange<RequestBuilder> {

	private final MockMvc mvc;

	private final String keyHeader;

	MockMvcExchange(MockMvc mvc, String keyHeader) {
		this.mvc = mvc;
		this.keyHeader = keyHeader;
	}

	@Override
	public ExchangedResponse send(RequestBuilder request, String key) {
		try {
			MvcResult result = this.mvc.perform(new KeyedRequestBuilder(request, this.keyHeader, key)).andReturn();
			if (result.getRequest().isAsyncStarted()) {
				result = this.mvc.perform(MockMvcRequestBuilders.asyncDispatch(result)).andReturn();
			}
			MockHttpServletResponse response = result.getResponse();
			HttpHeaders headers = new HttpHeaders();
			for (String name : response.getHeaderNames()) {
				headers.put(name, response.getHeaders(name));
			}
			return new ExchangedResponse(response.getStatus(), headers, response.getContentAsByteArray());
		}
		catch (RuntimeException ex) {
			throw ex;
		}
		catch (Exception ex) {
			throw new IllegalStateException("MockMvc could not perform the request", ex);
		}
	}

	/**
	 * The test's request with the key header added when it has none; post-processors and
	 * MockMvc's default request apply as they would to the request itself.
	 */
	private record KeyedRequestBuilder(RequestBuilder request, String header,
			String key) implements SmartRequestBuilder, Mergeable {

		@Override
		public MockHttpServletRequest buildRequest(ServletContext servletContext) {
			MockHttpServletRequest built = this.request.buildRequest(servletContext);
			if (built.getHeader(this.header) == null) {
				built.addHeader(this.header, this.key);
			}
			return built;
		}

		@Override
		public MockHttpServletRequest postProcessRequest(MockHttpServletRequest built) {
			return (this.request instanceof SmartRequestBuilder smart) ? smart.postProcessRequest(built) : built;
		}

		@Override
		public boolean isMergeEnabled() {
			return this.request instanceof Mergeable mergeable && mergeable.isMergeEnabled();
		}

		@Override
		public Object merge(Object parent) {
			return new KeyedRequestBuilder((RequestBuilder) ((Mergeable) this.request).merge(parent), this.header,
					this.key);
		}

	}

}
