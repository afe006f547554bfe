package io.nvmeof.target.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Path;

/** Tells SPDK's save_config shape ({@code {"subsystems":[{"subsystem":..,"config":[..]}]}}) from our config format. */
public final class SpdkConfigFile {
    private SpdkConfigFile() {}

    /**
     * The file's JSON if it is in SPDK's shape, else null (it is then read as our own format).
     *
     * A file that cannot be read or is not JSON is left to our own format's reader, which reports it.
     */
    public static JsonNode readIfSpdkShape(Path file) {
        JsonNode root;
        try {
            root = Management.JSON.readTree(file.toFile());
        } catch (IOException e) {
            return null;
        }
        JsonNode subsystems = root == null ? null : root.get("subsystems");
        if (subsystems != null && subsystems.isArray() && subsystems.size() > 0) {
            JsonNode first = subsystems.get(0);
            if (first.has("subsystem") && first.has("config")) {
                return root;
            }
        }
        return null;
    }
}
