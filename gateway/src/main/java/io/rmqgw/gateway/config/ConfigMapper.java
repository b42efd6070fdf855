package io.rmqgw.gateway.config;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializationConfig;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.deser.Deserializers;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import com.fasterxml.jackson.databind.jsontype.TypeDeserializer;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.BeanPropertyWriter;
import com.fasterxml.jackson.databind.ser.BeanSerializerModifier;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;
import com.fasterxml.jackson.databind.type.CollectionType;
import com.fasterxml.jackson.databind.type.LogicalType;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLGenerator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The one Jackson mapper of the configuration, for reading and for writing: kebab-case keys, strict about
 * unknown keys, duplicates and YAML's loose coercions, and the configuration's own value syntaxes (durations,
 * {@code host:port}, {@code FROM-TO}, name-server lists) both ways. Written out, a record is its components and
 * nothing else, less those marked {@link Secret}, and less the unset (null) ones.
 */
final class ConfigMapper {

    static final ObjectMapper MAPPER = newMapper();

    private ConfigMapper() {
    }

    private static ObjectMapper newMapper() {
        YAMLFactory yaml = YAMLFactory.builder()
            .disable(YAMLGenerator.Feature.WRITE_DOC_START_MARKER)
            .enable(YAMLGenerator.Feature.MINIMIZE_QUOTES)
            .build();
        YAMLMapper mapper = YAMLMapper.builder(yaml)
            .propertyNamingStrategy(PropertyNamingStrategies.KEBAB_CASE)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .serializationInclusion(JsonInclude.Include.NON_NULL)
            .build();
        // 'enabled: 1' is a mistake, not a boolean
        mapper.coercionConfigFor(LogicalType.Boolean).setCoercion(CoercionInputShape.Integer, CoercionAction.Fail);
        mapper.coercionConfigFor(LogicalType.Boolean).setCoercion(CoercionInputShape.Float, CoercionAction.Fail);
        mapper.coercionConfigFor(LogicalType.Integer).setCoercion(CoercionInputShape.Float, CoercionAction.Fail);
        mapper.coercionConfigFor(LogicalType.Integer).setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail);
        mapper.coercionConfigFor(LogicalType.Integer).setCoercion(CoercionInputShape.EmptyString, CoercionAction.AsNull);
        // 'advertise-host: on' is YAML for true, not a host name
        mapper.coercionConfigFor(LogicalType.Textual).setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail);
        SimpleModule module = new SimpleModule("rmqgw-config") {
            @Override
            public void setupModule(SetupContext context) {
                super.setupModule(context);
                context.addDeserializers(new AddressListDeserializers());
            }
        };
        module.addDeserializer(Duration.class, new ValueDeserializer<>(Duration.class, "a duration such as 30s",
            text -> ConfigLoader.parseDuration("", text)));
        module.addDeserializer(HostPort.class, new ValueDeserializer<>(HostPort.class, "host:port, e.g. 127.0.0.1:9876",
            text -> HostPort.parse("", text)));
        module.addDeserializer(PortRange.class, new ValueDeserializer<>(PortRange.class, "FROM-TO, e.g. 20900-20999",
            text -> PortRange.parse("", text)));
        module.addSerializer(Duration.class, new TextSerializer<>(Duration.class, ConfigLoader::formatDuration));
        module.addSerializer(HostPort.class, new TextSerializer<>(HostPort.class, HostPort::toString));
        module.addSerializer(PortRange.class, new TextSerializer<>(PortRange.class, PortRange::toString));
        module.setSerializerModifier(new RecordComponentsOnly());
        mapper.registerModule(module);
        return mapper;
    }

    /** A value written as one YAML scalar; a ConfigException with an empty path gets the key's path later. */
    private static final class ValueDeserializer<T> extends StdDeserializer<T> {

        private final String expected;
        private final Function<String, T> parser;

        ValueDeserializer(Class<T> type, String expected, Function<String, T> parser) {
            super(type);
            this.expected = expected;
            this.parser = parser;
        }

        @Override
        public T deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            JsonToken token = p.currentToken();
            if (token == JsonToken.VALUE_STRING) {
                String text = p.getText();
                return text.isBlank() ? null : parser.apply(text);
            }
            if (token == JsonToken.VALUE_NUMBER_INT || token == JsonToken.VALUE_NUMBER_FLOAT) {
                // a bare number: let the parser explain what is missing (a unit, a host, a range)
                return parser.apply(p.getText());
            }
            throw new ConfigException("", "expected " + expected + ", was " + ConfigErrors.describeToken(p));
        }
    }

    /** The same values written back as the text their deserializer reads. */
    private static final class TextSerializer<T> extends StdSerializer<T> {

        private final Function<T, String> format;

        TextSerializer(Class<T> type, Function<T, String> format) {
            super(type);
            this.format = format;
        }

        @Override
        public void serialize(T value, JsonGenerator gen, SerializerProvider provider) throws IOException {
            gen.writeString(format.apply(value));
        }
    }

    /**
     * A record is written as its components only (not {@code isEmpty()} and the like, which Jackson would take
     * for properties), less its {@link Secret} ones.
     */
    private static final class RecordComponentsOnly extends BeanSerializerModifier {
        @Override
        public List<BeanPropertyWriter> changeProperties(SerializationConfig config, BeanDescription beanDesc,
                                                         List<BeanPropertyWriter> properties) {
            Class<?> type = beanDesc.getBeanClass();
            if (!type.isRecord()) {
                return properties;
            }
            Set<String> written = Arrays.stream(type.getRecordComponents())
                .filter(c -> !c.isAnnotationPresent(Secret.class))
                .map(RecordComponent::getName)
                .collect(Collectors.toSet());
            List<BeanPropertyWriter> kept = new ArrayList<>(properties);
            kept.removeIf(p -> !written.contains(p.getMember().getName()));
            return kept;
        }
    }

    /** {@code List<HostPort>}: a YAML list of host:port, or RocketMQ's "a:9876;b:9876" string. */
    private static final class AddressListDeserializers extends Deserializers.Base {
        @Override
        public JsonDeserializer<?> findCollectionDeserializer(CollectionType type, DeserializationConfig config,
                                                              BeanDescription beanDesc, TypeDeserializer elementTypeDeserializer,
                                                              JsonDeserializer<?> elementDeserializer) {
            return type.getContentType().hasRawClass(HostPort.class) ? new AddressListDeserializer() : null;
        }
    }

    private static final class AddressListDeserializer extends StdDeserializer<List<HostPort>> {

        AddressListDeserializer() {
            super(List.class);
        }

        @Override
        public List<HostPort> deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            JsonToken token = p.currentToken();
            if (token == JsonToken.VALUE_STRING) {
                return ConfigLoader.parseAddressList("", p.getText());
            }
            if (token != JsonToken.START_ARRAY) {
                throw new ConfigException("", "expected a list of host:port, or \"host:port;host:port\", was "
                    + ConfigErrors.describeToken(p));
            }
            List<HostPort> result = new ArrayList<>();
            int index = 0;
            for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken(), index++) {
                try {
                    if (t != JsonToken.VALUE_STRING) {
                        throw new ConfigException("", "expected host:port, was " + ConfigErrors.describeToken(p));
                    }
                    result.add(HostPort.parse("", p.getText()));
                } catch (ConfigException e) {
                    throw JsonMappingException.wrapWithPath(e, result, index);
                }
            }
            return result;
        }
    }
}
