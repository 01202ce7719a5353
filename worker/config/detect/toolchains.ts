/**
 * Go, Rust and the JVM: one manifest decides the part. Their downloads go to the part's cache
 * directory in the workspace (setup's $HOME does not outlive setup), and the tests run offline
 * from it, as the agent's sandbox has no network.
 */
import { CACHE_DIR, type EcosystemRule } from "./types.js";

const cache = (what: string) => `"$PWD/${CACHE_DIR}/${what}"`;

const GO_ENV = `GOMODCACHE=${cache("go/mod")} GOCACHE=${cache("go/build")}`;

export const goRule: EcosystemRule = {
  ecosystem: "go",
  marks: (names) => names.has("go.mod"),
  reads: () => [],
  detect: () => ({
    evidence: ["go.mod"],
    // Compiling the packages and their tests once here fills the workspace's build cache, which every
    // sandbox after setup starts from: none of them compiles the standard library again (minutes).
    setup: [`${GO_ENV} go mod download`, `${GO_ENV} go test -run '^$' ./...`],
    test: `${GO_ENV} go test ./...`,
  }),
};

const CARGO_ENV = `CARGO_HOME=${cache("cargo")}`;

export const rustRule: EcosystemRule = {
  ecosystem: "rust",
  marks: (names) => names.has("Cargo.toml"),
  reads: () => [],
  detect: () => ({
    evidence: ["Cargo.toml"],
    setup: [`${CARGO_ENV} cargo fetch`],
    test: `${CARGO_ENV} cargo test --offline`,
  }),
};

const MAVEN_ENV = `MAVEN_USER_HOME=${cache("m2")}`;
const MAVEN_REPO = `-Dmaven.repo.local=${cache("m2/repository")}`;
const GRADLE_ENV = `GRADLE_USER_HOME=${cache("gradle")}`;

export const javaRule: EcosystemRule = {
  ecosystem: "java",
  marks: (names) => names.has("pom.xml") || names.has("build.gradle") || names.has("build.gradle.kts"),
  reads: () => [],
  detect({ names }) {
    if (names.has("pom.xml")) {
      const mvn = names.has("mvnw") ? "./mvnw" : "mvn";
      return {
        evidence: ["pom.xml", names.has("mvnw") ? "Maven wrapper" : "no Maven wrapper"],
        // The tests once, their failures left to the baseline: surefire resolves its booter and the
        // test framework's provider only when it runs tests, which `dependency:go-offline` never
        // fetches (the offline `mvn -o test` then fails on a real project), while it does fetch every
        // plugin of every later phase, which the tests never need.
        setup: [`${MAVEN_ENV} ${mvn} -B ${MAVEN_REPO} test -Dmaven.test.failure.ignore=true`],
        test: `${MAVEN_ENV} ${mvn} -B -o ${MAVEN_REPO} test`,
      };
    }
    const gradle = names.has("gradlew") ? "./gradlew" : "gradle";
    return {
      evidence: [
        names.has("build.gradle.kts") ? "build.gradle.kts" : "build.gradle",
        names.has("gradlew") ? "Gradle wrapper" : "no Gradle wrapper",
      ],
      setup: [`${GRADLE_ENV} ${gradle} --no-daemon testClasses`],
      test: `${GRADLE_ENV} ${gradle} --no-daemon --offline test`,
    };
  },
};
