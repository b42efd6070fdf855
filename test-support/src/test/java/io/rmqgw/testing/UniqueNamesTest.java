package io.rmqgw.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class UniqueNamesTest {

    @Test
    void namesAreNewEachTimeCleanedAndEndInTheRun() {
        String a = UniqueNames.topic("slow reader!");
        String b = UniqueNames.topic("slow reader!");
        assertNotEquals(a, b);
        assertTrue(a.matches("it_slow_reader__\\d+_" + UniqueNames.RUN), a);
        assertTrue(UniqueNames.group("g").matches("itg_g_\\d+_\\d{6}"));
        assertEquals(6, UniqueNames.RUN.length());
    }

    @Test
    void aWorkDirectoryIsNewAndCreated() {
        Path a = UniqueNames.workDir("acl");
        Path b = UniqueNames.workDir("acl");
        assertNotEquals(a, b);
        assertTrue(Files.isDirectory(a) && Files.isDirectory(b));
        assertEquals(UniqueNames.workRoot(), a.getParent());
    }
}
