package io.github.idempotent.store.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * The statements executed on the connections of a data source, by their SQL, and those
 * the database answered with an error; it can also run another caller's work just before
 * a statement, to interleave two callers exactly.
 */
final class StatementLog extends DelegatingDataSource {

	final List<String> executed = new CopyOnWriteArrayList<>();

	final List<String> failed = new CopyOnWriteArrayList<>();

	private final AtomicReference<@Nullable Interleaving> interleaving = new AtomicReference<>();

	StatementLog(DataSource target) {
		super(target);
	}

	/**
	 * Runs {@code action} once, just before the first statement whose SQL matches
	 * {@code statement} is executed.
	 */
	void beforeFirst(Predicate<String> statement, Runnable action) {
		this.interleaving.set(new Interleaving(statement, action));
	}

	@Override
	public Connection getConnection() throws SQLException {
		Connection connection = super.getConnection();
		return proxy(Connection.class, connection, (method, args) -> {
			Object result = invoke(connection, method, args);
			if (result instanceof PreparedStatement statement && method.getName().equals("prepareStatement")) {
				return logged(PreparedStatement.class, statement, (String) args[0]);
			}
			if (result instanceof Statement statement && method.getName().equals("createStatement")) {
				return logged(Statement.class, statement, null);
			}
			return result;
		});
	}

	private <S extends Statement> S logged(Class<S> type, S statement, @Nullable String prepared) {
		return proxy(type, statement, (method, args) -> {
			if (!method.getName().startsWith("execute")) {
				return invoke(statement, method, args);
			}
			String sql = (prepared != null) ? prepared : String.valueOf(args[0]);
			Interleaving before = this.interleaving.get();
			if (before != null && before.statement().test(sql) && this.interleaving.compareAndSet(before, null)) {
				before.action().run();
			}
			this.executed.add(sql);
			try {
				return invoke(statement, method, args);
			}
			catch (SQLException ex) {
				this.failed.add(ex.getMessage() + ": " + sql);
				throw ex;
			}
		});
	}

	private static <T> T proxy(Class<T> type, T target, Invocation invocation) {
		return type.cast(Proxy.newProxyInstance(StatementLog.class.getClassLoader(), new Class<?>[] { type },
				(proxy, method, args) -> invocation.invoke(method, args)));
	}

	private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
		try {
			return method.invoke(target, args);
		}
		catch (InvocationTargetException ex) {
			throw ex.getTargetException();
		}
	}

	private record Interleaving(Predicate<String> statement, Runnable action) {
	}

	interface Invocation {

		Object invoke(Method method, Object[] args) throws Throwable;

	}

}
