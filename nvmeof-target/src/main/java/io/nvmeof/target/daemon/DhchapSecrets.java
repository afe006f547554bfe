package io.nvmeof.target.daemon;

import io.nvmeof.core.auth.DhchapSecret;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads a DH-HMAC-CHAP secret given inline ({@code DHHC-1:...}) or as a file holding one (the way nvme-cli and SPDK's
 * keyring keep them; a file readable by others is refused, as SPDK's keyring_file does). Messages name the file or
 * the option, never the key.
 */
public final class DhchapSecrets {
    private DhchapSecrets() {}

    /** The secret of {@code inline} or, if it is null, of {@code file}. */
    public static DhchapSecret read(String inline, String file, String what) {
        if (inline != null) {
            try {
                return DhchapSecret.parse(inline);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(what + ": " + e.getMessage());
            }
        }
        return readFile(Path.of(file), what);
    }

    /** The secret in {@code file} (surrounding white space ignored); the file must not be readable by group or others. */
    public static DhchapSecret readFile(Path file, String what) {
        try {
            var perms = Files.getPosixFilePermissions(file);
            if (perms.contains(java.nio.file.attribute.PosixFilePermission.GROUP_READ)
                    || perms.contains(java.nio.file.attribute.PosixFilePermission.OTHERS_READ)) {
                throw new IllegalArgumentException(
                        what + " file " + file + " is readable by group or others: chmod 600 it (it holds a secret)");
            }
            return DhchapSecret.parse(Files.readString(file));
        } catch (UnsupportedOperationException e) {
            return parseFile(file, what); // no POSIX permissions on this file system
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read " + what + " file " + file + ": " + e.getMessage());
        } catch (IllegalArgumentException e) {
            throw e.getMessage().startsWith(what)
                    ? e
                    : new IllegalArgumentException(what + " file " + file + ": " + e.getMessage());
        }
    }

    private static DhchapSecret parseFile(Path file, String what) {
        try {
            return DhchapSecret.parse(Files.readString(file));
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read " + what + " file " + file + ": " + e.getMessage());
        }
    }
}
