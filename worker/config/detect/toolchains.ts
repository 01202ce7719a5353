/**
 * Go, Rust and the JVM: one manifest decides the part. Their downloads go to the cache directory in
 * the workspace (setup's $HOME does not outlive setup), named by variables in the run's shell
 * environment, and the tests run offline from it, as the agent's sandbox has no network.
 */
import { cachePath, type EcosystemRule } from "./ecosystem-rule.js";

export const goRule: EcosystemRule = {
  ecosystem: "go",
  marks: (names) => names.has("go.mod"),
  reads: () => [],
  detect: () => ({
    evidence: ["go.mod"],
    env: { GOMODCACHE: cachePath("go/mod"), GOCACHE: cachePath("go/build") },
    // Compiling the packages and their tests once here fills the workspace's build cache, which every
    // sandbox after setup starts from: none of them compiles the standard library again (minutes).
    // A go.mod asking for a newer Go than the image's has it downloaded here too (GOTOOLCHAIN), into
    // GOMODCACHE, where the offline sandboxes after setup find it.
    setup: ["go mod download", "go test -run '^$' ./..."],
    test: "go test ./...",
  }),
};

export const rustRule: EcosystemRule = {
  ecosystem: "rust",
  marks: (names) => names.has("Cargo.toml"),
  reads: () => [],
  detect: () => ({
    evidence: ["Cargo.toml"],
    env: { CARGO_HOME: cachePath("cargo") },
    setup: ["cargo fetch"],
    test: "cargo test --offline",
  }),
};

export const javaRule: EcosystemRule = {
  ecosystem: "java",
  marks: (names) => names.has("pom.xml") || names.has("build.gradle") || names.has("build.gradle.kts"),
  reads: () => [],
  detect({ names }) {
    if (names.has("pom.xml")) {
      const mvn = names.has("mvnw") ? "./mvnw" : "mvn";
      return {
        evidence: ["pom.xml", names.has("mvnw") ? "Maven wrapper" : "no Maven wrapper"],
        // MAVEN_USER_HOME: where the wrapper keeps the Maven it downloads; MAVEN_OPTS: the local
        // repository, which Maven reads as a system property.
        env: {
          MAVEN_USER_HOME: cachePath("m2"),
          MAVEN_OPTS: cachePath("m2/repository", "-Dmaven.repo.local="),
        },
        // The tests once, their failures left to the baseline: surefire resolves its booter and the
        // test framework's provider only when it runs tests, which `dependency:go-offline` never
        // fetches (the offline `mvn -o test` then fails on a real project), while it does fetch every
        // plugin of every later phase, which the tests never need.
        setup: [`${mvn} -B test -Dmaven.test.failure.ignore=true`],
        test: `${mvn} -B -o test`,
      };
    }
    const gradle = names.has("gradlew") ? "./gradlew" : "gradle";
    return {
      evidence: [
        names.has("build.gradle.kts") ? "build.gradle.kts" : "build.gradle",
        names.has("gradlew") ? "Gradle wrapper" : "no Gradle wrapper",
      ],
      env: { GRADLE_USER_HOME: cachePath("gradle") },
      setup: [`${gradle} --no-daemon testClasses`],
      test: `${gradle} --no-daemon --offline test`,
    };
  },
};
