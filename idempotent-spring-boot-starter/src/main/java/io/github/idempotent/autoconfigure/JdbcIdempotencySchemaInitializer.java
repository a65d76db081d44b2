package io.github.idempotent.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import org.springframework.boot.jdbc.DatabaseDriver;
import org.springframework.boot.jdbc.init.DataSourceScriptDatabaseInitializer;
import org.springframework.boot.jdbc.init.PlatformPlaceholderDatabaseDriverResolver;
import org.springframework.boot.sql.init.DatabaseInitializationMode;
import org.springframework.boot.sql.init.DatabaseInitializationSettings;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.core.io.Resource;
import org.springframework.util.StreamUtils;

import io.github.idempotent.store.jdbc.JdbcDialect;

/**
 * Creates the JDBC store's table at start-up from the shipped {@code schema-*.sql} of the
 * database, as Spring Session JDBC does; a Boot database initializer, so that JPA and
 * other users of the database start after it. The scripts create the table only if it
 * does not exist, so {@code always} is safe on every start. Define a bean of this type
 * (or of Boot's {@code DataSourceScriptDatabaseInitializer} family) to replace it, for
 * example with scripts of your own migration tool's layout.
 */
public class JdbcIdempotencySchemaInitializer extends DataSourceScriptDatabaseInitializer {

	private final String tableName;

	public JdbcIdempotencySchemaInitializer(DataSource dataSource, IdempotentProperties.Jdbc properties) {
		super(dataSource, settings(dataSource, properties));
		this.tableName = properties.getTableName();
	}

	private static DatabaseInitializationSettings settings(DataSource dataSource,
			IdempotentProperties.Jdbc properties) {
		DatabaseInitializationSettings settings = new DatabaseInitializationSettings();
		settings.setMode(switch (properties.getInitializeSchema()) {
			case EMBEDDED -> DatabaseInitializationMode.EMBEDDED;
			case ALWAYS -> DatabaseInitializationMode.ALWAYS;
			case NEVER -> DatabaseInitializationMode.NEVER;
		});
		if (settings.getMode() != DatabaseInitializationMode.NEVER) {
			String location = JdbcDialect.H2.getSchemaLocation().replace("-h2.sql", "-@@platform@@.sql");
			settings.setSchemaLocations(
					new PlatformPlaceholderDatabaseDriverResolver().withDriverPlatform(DatabaseDriver.MARIADB, "mysql")
						.resolveAll(dataSource, location));
		}
		return settings;
	}

	@Override
	protected void runScripts(Scripts scripts) {
		Charset encoding = (scripts.getEncoding() != null) ? scripts.getEncoding() : StandardCharsets.UTF_8;
		List<Resource> renamed = new ArrayList<>();
		for (Resource script : scripts) {
			try {
				String text = StreamUtils.copyToString(script.getInputStream(), encoding);
				renamed.add(new ByteArrayResource(JdbcDialect.withTableName(text, this.tableName).getBytes(encoding),
						script.getDescription()));
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
