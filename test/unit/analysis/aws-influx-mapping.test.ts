// CloudWatch's request form and XML answer, InfluxDB's annotated CSV, read and written as Argo's providers see them.
import { describe, expect, it } from 'vitest';
import {
  cloudWatchEndpoint,
  formatCloudWatchValues,
  getMetricDataForm,
  mapGetMetricData,
} from '../../../src/analysis/providers/cloudwatch-provider.ts';
import { goFloat } from '../../../src/analysis/providers/go-float-format.ts';
import { mapFluxCsv, parseCsvRows } from '../../../src/analysis/providers/influxdb-provider.ts';
import { MetricProviderError } from '../../../src/analysis/providers/metric-provider-error.ts';
import { SeededRandom } from '../../../src/sandbox/random/seeded-random.ts';

const START = new Date(Date.UTC(2026, 0, 1, 11, 30, 0));
const END = new Date(Date.UTC(2026, 0, 1, 12, 0, 0));

describe('CloudWatch: GetMetricData in the AWS Query protocol', () => {
  it('members are numbered from 1, nested as the model names them, optional ones left out', () => {
    const form = getMetricDataForm(
      [
        { id: 'rate', expression: 'errors / requests', label: 'Error rate' },
        {
          id: 'errors',
          metricStat: {
            metric: {
              namespace: 'app',
              metricName: 'errors',
              dimensions: [{ name: 'Service', value: 'shop' }],
            },
            period: '300',
            stat: 'p99',
          },
          returnData: false,
        },
      ],
      START,
      END,
    );
    expect([...form]).toEqual([
      ['Action', 'GetMetricData'],
      ['Version', '2010-08-01'],
      ['StartTime', '2026-01-01T11:30:00Z'],
      ['EndTime', '2026-01-01T12:00:00Z'],
      ['MetricDataQueries.member.1.Id', 'rate'],
      ['MetricDataQueries.member.1.Expression', 'errors / requests'],
      ['MetricDataQueries.member.1.Label', 'Error rate'],
      ['MetricDataQueries.member.2.Id', 'errors'],
      ['MetricDataQueries.member.2.MetricStat.Metric.Namespace', 'app'],
      ['MetricDataQueries.member.2.MetricStat.Metric.MetricName', 'errors'],
      ['MetricDataQueries.member.2.MetricStat.Metric.Dimensions.member.1.Name', 'Service'],
      ['MetricDataQueries.member.2.MetricStat.Metric.Dimensions.member.1.Value', 'shop'],
      ['MetricDataQueries.member.2.MetricStat.Period', '300'],
      ['MetricDataQueries.member.2.MetricStat.Stat', 'p99'],
      ['MetricDataQueries.member.2.ReturnData', 'false'],
    ]);
  });

  it('a period an argument left as no whole number is an error naming the field', () => {
    expect(() =>
      getMetricDataForm([{ id: 'q', metricStat: { metric: {}, period: '5m', stat: 'Sum' } }], START, END),
    ).toThrow(/metricDataQueries\[0\]\.metricStat\.period: must be a whole number of seconds/);
  });

  it('the answer: results with the SDK field names, lists of <member>, numbers read, messages kept', () => {
    const xml = `<?xml version="1.0"?>
<GetMetricDataResponse xmlns="http://monitoring.amazonaws.com/doc/2010-08-01/">
  <GetMetricDataResult>
    <MetricDataResults>
      <member>
        <Id>rate</Id><Label>Error rate &amp; more</Label>
        <Timestamps><member>2026-01-01T11:55:00Z</member><member>2026-01-01T11:50:00Z</member></Timestamps>
        <Values><member>0.0051</member><member>1.0E-5</member></Values>
        <StatusCode>PartialData</StatusCode>
        <Messages><member><Code>ArithmeticError</Code><Value>One or more data-points have been dropped due to non-numeric values (NaN, -Infinite, +Infinite)</Value></member></Messages>
      </member>
      <member><Id>empty</Id><Label>empty</Label><Timestamps/><Values/><StatusCode>Complete</StatusCode><Messages/></member>
    </MetricDataResults>
    <Messages><member><Code>MaxMetricsExceeded</Code><Value>Maximum number of allowed metrics exceeded</Value></member></Messages>
  </GetMetricDataResult>
  <ResponseMetadata><RequestId>r</RequestId></ResponseMetadata>
</GetMetricDataResponse>`;
    const { results, messages } = mapGetMetricData(xml);
    expect(results).toEqual([
      {
        Id: 'rate',
        Label: 'Error rate & more',
        StatusCode: 'PartialData',
        Timestamps: ['2026-01-01T11:55:00Z', '2026-01-01T11:50:00Z'],
        Values: [0.0051, 0.00001],
        Messages: [
          {
            Code: 'ArithmeticError',
            Value:
              'One or more data-points have been dropped due to non-numeric values (NaN, -Infinite, +Infinite)',
          },
        ],
      },
      { Id: 'empty', Label: 'empty', StatusCode: 'Complete', Timestamps: [], Values: [], Messages: [] },
    ]);
    expect(messages).toEqual([
      { Code: 'MaxMetricsExceeded', Value: 'Maximum number of allowed metrics exceeded' },
    ]);
    // Argo's %+v of [][]float64.
    expect(formatCloudWatchValues(results)).toBe('[[0.0051 1e-05] []]');
  });

  it('an answer that is not GetMetricData, or a value that is no number, is an error', () => {
    expect(() => mapGetMetricData('<html>proxy</html>')).toThrow(MetricProviderError);
    expect(() =>
      mapGetMetricData(
        '<GetMetricDataResponse><GetMetricDataResult><MetricDataResults><member><Id>a</Id><Values><member>lots</member></Values></member></MetricDataResults></GetMetricDataResult></GetMetricDataResponse>',
      ),
    ).toThrow(/value "lots" is not a number/);
  });

  it('the endpoint: the region’s, China’s, or the AWS SDKs’ overrides (service-specific first)', () => {
    expect(cloudWatchEndpoint('eu-west-1', {})).toBe('https://monitoring.eu-west-1.amazonaws.com');
    expect(cloudWatchEndpoint('cn-north-1', {})).toBe('https://monitoring.cn-north-1.amazonaws.com.cn');
    expect(cloudWatchEndpoint('eu-west-1', { AWS_ENDPOINT_URL: 'https://all.example/' })).toBe(
      'https://all.example',
    );
    expect(
      cloudWatchEndpoint('eu-west-1', {
        AWS_ENDPOINT_URL: 'https://all.example',
        AWS_ENDPOINT_URL_CLOUDWATCH: 'https://vpce-1.monitoring.eu-west-1.vpce.amazonaws.com',
      }),
    ).toBe('https://vpce-1.monitoring.eu-west-1.vpce.amazonaws.com');
  });
});

describe("Go's %v of a float64", () => {
  it.each([
    [0.005, '0.005'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [1.5e-7, '1.5e-07'],
    [42, '42'],
    [123456789012, '123456789012'],
    [1e21, '1e+21'],
    [-2.5, '-2.5'],
    [0, '0'],
    [Number.NaN, 'NaN'],
    [Number.POSITIVE_INFINITY, '+Inf'],
  ])('%s → %s', (value, text) => {
    expect(goFloat(value)).toBe(text);
  });
});

describe('InfluxDB: annotated CSV', () => {
  it('RFC 4180 rows: quoted commas, quotes and line breaks; CRLF; a blank line is an empty row', () => {
    expect(parseCsvRows('a,"b,c","say ""hi""","two\r\nlines"\r\n\r\nx,\r\n')).toEqual([
      ['a', 'b,c', 'say "hi"', 'two\r\nlines'],
      [],
      ['x', ''],
    ]);
  });

  it("every table's _value in order, typed by #datatype, an empty cell taking #default", () => {
    const csv = [
      '#datatype,string,long,dateTime:RFC3339,double,string',
      '#group,false,false,false,false,true',
      '#default,_result,,,,',
      ',result,table,_time,_value,pod',
      ',,0,2026-01-01T11:58:00Z,0.004,a',
      ',,0,2026-01-01T11:59:00Z,1e-05,a',
      '',
      '#datatype,string,long,dateTime:RFC3339,long,boolean',
      '#group,false,false,false,false,true',
      '#default,_result,,,7,',
      ',result,table,_time,_value,ok',
      ',,1,2026-01-01T11:59:00Z,12,true',
      ',,1,2026-01-01T11:59:30Z,,false',
      '',
      '#datatype,string,long,string',
      '#group,false,false,false',
      '#default,_result,,',
      ',result,table,_value',
      ',,2,"up, mostly"',
      '',
    ].join('\r\n');
    expect(mapFluxCsv(csv)).toEqual([0.004, 0.00001, 12, 7, 'up, mostly']);
  });

  it('doubles spelled +Inf, -Inf and NaN; a cell that is not its type is an error', () => {
    const table = (type: string, value: string) =>
      `#datatype,string,long,${type}\n#group,false,false,false\n#default,_result,,\n,result,table,_value\n,,0,${value}\n`;
    expect(mapFluxCsv(table('double', '+Inf'))).toEqual([Infinity]);
    expect(mapFluxCsv(table('double', 'NaN'))).toEqual([Number.NaN]);
    expect(() => mapFluxCsv(table('double', 'fast'))).toThrow(/"fast" is not a double/);
    expect(() => mapFluxCsv(table('long', '1.5'))).toThrow(/"1.5" is not a long/);
  });

  it("the error table InfluxDB may send with a 200 is the query's error", () => {
    const csv =
      '#datatype,string,string\n#group,true,true\n#default,,\n,error,reference\n,"panic: runtime error: index out of range",897\n';
    expect(() => mapFluxCsv(csv)).toThrow(/the Flux query failed: panic: runtime error: index out of range/);
  });

  it('records without a _value column are null; no table at all is no value', () => {
    expect(mapFluxCsv('#datatype,string,long,string\n,result,table,host\n,,0,a\n')).toEqual([null]);
    expect(mapFluxCsv('\r\n')).toEqual([]);
  });
});

describe('hostile answers are a result or a MetricProviderError, never another throw', () => {
  const PIECES = [
    '<',
    '>',
    '</',
    '<member>',
    '</member>',
    '<Values>',
    '</Values>',
    '<GetMetricDataResponse>',
    '<GetMetricDataResult>',
    '<MetricDataResults>',
    '&amp;',
    '&#x0;',
    '&bogus;',
    '"',
    ',',
    '\r\n',
    '\n',
    '#datatype',
    '#default',
    ',result,table,_value',
    'double',
    'long',
    'NaN',
    '1e309',
    '-',
    '0.5',
    '__proto__',
    '\u0000',
    'é',
  ];
  it.each([mapGetMetricData, mapFluxCsv])('%o over 500 seeded bodies', (read) => {
    const random = new SeededRandom(33);
    for (let i = 0; i < 500; i++) {
      let body = '';
      const length = Math.floor(random.next() * 40);
      for (let k = 0; k < length; k++) body += PIECES[Math.floor(random.next() * PIECES.length)];
      try {
        read(body);
      } catch (error) {
        expect(error, `iteration ${i}: ${JSON.stringify(body)}`).toBeInstanceOf(MetricProviderError);
      }
    }
  });

  it('an XML answer with a DOCTYPE (entity expansion) is refused unread', () => {
    const bomb = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><GetMetricDataResponse><GetMetricDataResult><MetricDataResults><member><Id>&lol2;</Id></member></MetricDataResults></GetMetricDataResult></GetMetricDataResponse>`;
    expect(() => mapGetMetricData(bomb)).toThrow(/not a GetMetricDataResponse/);
  });
});
