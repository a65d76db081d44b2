package io.github.idempotent.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import org.springframework.boot.jdbc.DatabaseDriver;
import org.springframework.boot.jdbc.init.PropertiesBasedDataSourceScriptDatabaseInitializer;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.core.io.Resource;

import io.github.idempotent.store.jdbc.JdbcDialect;

/**
 * Creates the JDBC store's table at start-up from the shipped {@code schema-*.sql} (or
 * {@code idempotent.store.jdbc.schema}), as a Boot database initializer, so that JPA
 * starts after it. Define a bean of this type to replace it.
 */
public class JdbcIdempotencySchemaInitializer
		extends PropertiesBasedDataSourceScriptDatabaseInitializer<IdempotentJdbcProperties> {

	private final String tableName;

	public JdbcIdempotencySchemaInitializer(DataSource dataSource, IdempotentJdbcProperties properties) {
		// MariaDB runs the MySQL script.
		super(dataSource, properties, Map.of(DatabaseDriver.MARIADB, "mysql"));
		this.tableName = properties.getTableName();
	}

	@Override
	protected void runScripts(Scripts scripts) {
		Charset encoding = (scripts.getEncoding() != null) ? scripts.getEncoding() : StandardCharsets.UTF_8;
		List<Resource> renamed = new ArrayList<>();
		for (Resource script : scripts) {
			try {
				String text = JdbcDialect.withTableName(script.getContentAsString(encoding), this.tableName);
				renamed.add(new ByteArrayResource(text.getBytes(encoding), script.getDescription()));
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Cannot read " + script, ex);
			}
		}
		super.runScripts(new Scripts(renamed).continueOnError(scripts.isContinueOnError())
			.separator(scripts.getSeparator())
			.encoding(encoding));
	}

}
