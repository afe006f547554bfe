package io.nvmeof.target.daemon;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * {@code --log-format json}: one JSON object per log record and line, with {@code time} (ISO-8601, UTC),
 * {@code level}, {@code logger}, {@code message} (parameters filled in) and, when there is one, {@code thrown} (the
 * stack trace as text). Jackson writes the JSON, so every string is escaped and a line never breaks. The target logs
 * through System.Logger, which goes to java.util.logging by default; this formats that.
 */
public final class JsonLogFormatter extends Formatter {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Override
    public String format(LogRecord record) {
        ObjectNode line = JSON.createObjectNode();
        line.put("time", Instant.ofEpochMilli(record.getMillis()).toString());
        line.put("level", record.getLevel().getName());
        line.put("logger", record.getLoggerName());
        line.put("message", formatMessage(record));
        if (record.getThrown() != null) {
            StringWriter trace = new StringWriter();
            record.getThrown().printStackTrace(new PrintWriter(trace));
            line.put("thrown", trace.toString());
        }
        try {
            return JSON.writeValueAsString(line) + System.lineSeparator();
        } catch (JsonProcessingException e) {
            return "{\"level\":\"SEVERE\",\"message\":\"a log record could not be written as JSON\"}"
                    + System.lineSeparator();
        }
    }

    /** Formats every handler of the root logger (the console) with this formatter. */
    public static void install() {
        for (Handler h : Logger.getLogger("").getHandlers()) {
            h.setFormatter(new JsonLogFormatter());
        }
    }
}
